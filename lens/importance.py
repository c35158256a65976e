"""Head importance: what the model loses when one head is switched off, or left alone in its layer.

Every head of every attention kind (encoder self, decoder self, cross; each layer) is scored on a
fixed slice of val: the mean token cross-entropy teacher-forced on the references (no label
smoothing) and the greedy sacreBLEU of its translations, with the head switched off (its output
zeroed before W_O, model/heads.py) and with only that head left on in its layer. Beside that,
for cross-attention, how often a head's strongest source token is also the most-attributed one
(lens/attribute.py) over the model's own greedy translations of the slice.

The result is one JSON-ready dict (schema VERSION below); recipes/head_importance.py writes it to
<checkpoint>/head_importance.json, and `importance_table_markdown` renders it for the model card.

Shape legend: L layers of a kind, H heads.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from model.heads import KINDS, HeadMask
from training_data.checked_json import (
    CheckpointFileError,
    checked_object,
    is_finite,
    is_whole,
    read_json,
    refused,
)
from translation.translator import padded

from .attribute import (
    BASELINE,
    METHODS,
    agreement,
    attention_maps,
    attribute_ids,
    special_token_masks,
    translate_ids,
)

VERSION = 1
FILE = "head_importance.json"  # beside the weights
# Reading FILE: a fixed allowance (the slice's line numbers, the method's words) plus so much per head of the
# model (the shipped file: 7 kB for 36 heads); without the model's config, at most MAX_FILE_BYTES.
BASE_BYTES, BYTES_PER_HEAD, MAX_FILE_BYTES, MAX_DEPTH = 256 << 10, 1 << 10, 4 << 20, 6
MAX_LAYERS = 1024
SLICE_WHY = (
    "the first sentences of Multi30k val, in file order: fixed, so figures from different runs and "
    "checkpoints compare; val, not test, so the test score stays untouched; 200 sentences keep the "
    "73 scored configurations of the shipped model to minutes, not hours, on one CPU thread"
)


@dataclass
class ValSlice:
    """The sentences every head is scored on, and how they were chosen."""

    src: list[str]
    tgt: list[str]
    indices: list[int]  # line numbers in the val files
    selection: str  # "first" or "random"
    seed: int | None


def choose_slice(corpus, sentences: int = 200, seed: int | None = None) -> ValSlice:
    """The first `sentences` pairs, or with a seed a random sample of that many (in file order)."""
    if sentences < 1:
        raise ValueError(f"--sentences must be at least 1, got {sentences}")
    n = min(sentences, len(corpus.src))
    if seed is None:
        indices = list(range(n))
    else:
        indices = sorted(random.Random(seed).sample(range(len(corpus.src)), n))
    return ValSlice(
        [corpus.src[i] for i in indices],
        [corpus.tgt[i] for i in indices],
        indices,
        "first" if seed is None else "random",
        seed,
    )


def reference_pairs(translator, val: ValSlice) -> list[tuple[list[int], list[int]]]:
    """(source ids + EOS, BOS + reference ids + EOS) of each pair, cut to the model's max_len."""
    c = translator.config
    pairs = []
    for src_text, tgt_text in zip(val.src, val.tgt):
        src_ids, _ = translator.encode_source(src_text)
        tgt_ids = translator.tokenizer.encode(tgt_text, add_special_tokens=False).ids[: c.max_len - 1]
        pairs.append((src_ids, [c.bos_id] + tgt_ids + [c.eos_id]))
    return pairs


@torch.inference_mode()
def slice_loss(translator, pairs: list[tuple[list[int], list[int]]], head_mask=None, batch_size: int = 50) -> float:
    """Mean cross-entropy per reference token (nats), teacher-forced, no label smoothing."""
    model, pad_id = translator.model, translator.config.pad_id
    total, count = 0.0, 0
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        src = padded([s for s, _ in chunk], pad_id, translator.device)  # (B, S)
        tgt_in = padded([t[:-1] for _, t in chunk], pad_id, translator.device)  # (B, T): BOS + all but the last
        tgt_out = padded([t[1:] for _, t in chunk], pad_id, translator.device)  # (B, T): what each step predicts
        logits = model(src, tgt_in, head_mask=head_mask)  # (B, T, V)
        total += F.cross_entropy(
            logits.float().flatten(0, 1), tgt_out.flatten(), ignore_index=pad_id, reduction="sum"
        ).item()
        count += int((tgt_out != pad_id).sum())
    return total / max(count, 1)


def slice_bleu(translator, val: ValSlice, head_mask=None) -> float:
    """sacreBLEU (cased, detokenized) of greedy translations of the slice against its references."""
    from sacrebleu.metrics import BLEU

    hypotheses = translator.translate(val.src, num_beams=1, head_mask=head_mask)
    return BLEU().corpus_score(hypotheses, [val.tgt]).score


def score(translator, val: ValSlice, pairs, head_mask=None) -> dict:
    """{"val_loss", "val_bleu"} of the model with `head_mask` applied (None: every head on)."""
    return {"val_loss": slice_loss(translator, pairs, head_mask), "val_bleu": slice_bleu(translator, val, head_mask)}


def layers_of(config, kind: str) -> int:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return config.n_encoder_layers if kind == "encoder" else config.n_decoder_layers


def ablation_scores(translator, val: ValSlice, progress: Callable[[str], None] | None = None) -> dict:
    """Baseline, then per kind "switched_off" and "only" scores, each a [layer][head] list."""
    c = translator.config
    pairs = reference_pairs(translator, val)
    all_on = HeadMask.all_on(c)
    baseline = score(translator, val, pairs)
    kinds = {}
    for kind in KINDS:
        result: dict[str, dict[str, list[list[float]]]] = {
            variant: {"val_loss": [], "val_bleu": []} for variant in ("switched_off", "only")
        }  # variant -> metric -> [layer][head]
        for layer in range(layers_of(c, kind)):
            for metrics in result.values():
                metrics["val_loss"].append([])
                metrics["val_bleu"].append([])
            for head in range(c.n_heads):
                masks = {"switched_off": all_on.switched_off(kind, layer, head), "only": all_on.only(kind, layer, head)}
                for variant, mask in masks.items():
                    scores = score(translator, val, pairs, mask)
                    result[variant]["val_loss"][layer].append(round(scores["val_loss"], 5))
                    result[variant]["val_bleu"][layer].append(round(scores["val_bleu"], 3))
                if progress:
                    progress(
                        f"{kind} layer {layer} head {head}: loss {result['switched_off']['val_loss'][layer][-1]}"
                        f" when off, {result['only']['val_loss'][layer][-1]} alone"
                    )
        off_loss = np.array(result["switched_off"]["val_loss"])
        result["importance"] = np.round(off_loss - baseline["val_loss"], 5).tolist()  # loss increase when off
        kinds[kind] = result
    baseline = {"val_loss": round(baseline["val_loss"], 5), "val_bleu": round(baseline["val_bleu"], 3)}
    return {"baseline": baseline, "kinds": kinds}


def slice_agreement(
    translator,
    val: ValSlice,
    method: str = "integrated_gradients",
    steps: int = 32,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Cross-attention/attribution agreement pooled over every counted target token of the slice,
    on the model's own greedy translations (all heads on)."""
    model, c = translator.model, translator.config
    L, H = c.n_decoder_layers, c.n_heads
    hits, hits_mean, tokens = np.zeros((L, H)), np.zeros(L), 0
    for done, text in enumerate(val.src, start=1):
        src_ids, _ = translator.encode_source(text)
        tgt_ids = translate_ids(translator, src_ids, num_beams=1)
        scores = attribute_ids(model, src_ids, tgt_ids, method, steps).scores
        _, cross = attention_maps(translator, src_ids, tgt_ids)
        per_head, per_layer, counted = agreement(cross, scores, *special_token_masks(c, src_ids, tgt_ids))
        hits += per_head * counted  # back from shares to counts, so long sentences weigh more
        hits_mean += per_layer * counted
        tokens += counted
        if progress and (done % 10 == 0 or done == len(val.src)):
            progress(f"agreement: {done}/{len(val.src)} sentences")
    return {
        "agreement": np.round(hits / max(tokens, 1), 4).tolist(),
        "agreement_mean_heads": np.round(hits_mean / max(tokens, 1), 4).tolist(),
        "tokens": tokens,
    }


def head_importance(
    translator,
    val: ValSlice,
    checkpoint: str = "",
    attribution: str = "integrated_gradients",
    steps: int = 32,
    progress: Callable[[str], None] | None = None,
    known_agreement: dict | None = None,
) -> dict:
    """The whole head-importance record (schema VERSION) for one translator and val slice.

    `known_agreement`: a slice_agreement() result to reuse (see reusable_agreement), else computed.
    """
    started = time.perf_counter()
    c = translator.config
    result = ablation_scores(translator, val, progress)
    agree = known_agreement or slice_agreement(translator, val, attribution, steps, progress)
    result["kinds"]["cross"]["agreement"] = agree["agreement"]
    result["kinds"]["cross"]["agreement_mean_heads"] = agree["agreement_mean_heads"]
    return {
        "version": VERSION,
        "checkpoint": str(checkpoint),
        "shape": {
            "n_heads": c.n_heads,
            "encoder": c.n_encoder_layers,
            "decoder": c.n_decoder_layers,
            "cross": c.n_decoder_layers,
        },
        "slice": {
            "split": "val",
            "sentences": len(val.indices),
            "selection": val.selection,
            "seed": val.seed,
            "indices": val.indices,
            "why": SLICE_WHY if val.selection == "first" else "a seeded random sample",
        },
        "method": {
            "ablation": "one head's output zeroed before the output projection W_O (model/heads.py HeadMask); "
            "'switched_off': that head alone off; 'only': every other head of its layer off",
            "val_loss": "mean cross-entropy per reference token in nats, teacher-forced, no label smoothing",
            "val_bleu": "sacreBLEU corpus BLEU (cased, 13a) of greedy translations",
            "importance": "val_loss with the head switched off minus the baseline val_loss",
            "attribution": {
                "method": attribution,
                "steps": steps if attribution == "integrated_gradients" else 1,
                "baseline": BASELINE if attribution == "integrated_gradients" else None,
                "target": "log-probability of each token of the model's greedy translation",
            },
            "agreement": "share of target tokens whose highest-cross-attention source token is the highest-"
            "attribution one (signed); <s>, </s> and padding left out; pooled over the slice's tokens",
        },
        "baseline": result["baseline"],
        "kinds": result["kinds"],
        "agreement_tokens": agree["tokens"],
        "seconds": round(time.perf_counter() - started, 1),
    }


def reusable_agreement(earlier: dict, val: ValSlice, attribution: str, steps: int) -> dict:
    """The agreement of an earlier head-importance record, if it was measured the same way on the
    same slice (it depends on the weights alone, not on the masks): skips the slowest part."""
    method = earlier.get("method", {}).get("attribution", {})
    same = (
        earlier.get("version") == VERSION
        and earlier.get("slice", {}).get("indices") == val.indices
        and method.get("method") == attribution
        and (attribution != "integrated_gradients" or method.get("steps") == steps)
    )
    if not same:
        raise ValueError(
            "the earlier head importance was measured on another slice or with another attribution; "
            "run without reusing its agreement"
        )
    cross = earlier["kinds"]["cross"]
    return {
        "agreement": cross["agreement"],
        "agreement_mean_heads": cross["agreement_mean_heads"],
        "tokens": earlier["agreement_tokens"],
    }


def ranked_heads(importance: dict, kind: str | None = None) -> list[tuple[str, int, int, float]]:
    """(kind, layer, head, loss increase when off) of the chosen kind (None: all), most important first."""
    kinds = KINDS if kind is None else (kind,)
    rows: list[tuple[str, int, int, float]] = []
    for k in kinds:
        if k not in importance.get("kinds", {}):
            raise ValueError(f"kind must be one of {KINDS} (or None for all), got {k!r}")
        for layer, heads in enumerate(importance["kinds"][k]["importance"]):
            rows.extend((k, layer, head, value) for head, value in enumerate(heads))
    return sorted(rows, key=lambda row: -row[3])


def importance_table_markdown(importance: dict) -> str:
    """A short markdown table for the model card: per kind and layer, each head's loss increase
    and BLEU change when it alone is switched off; then the most faithful alignment head."""
    if importance.get("version") != VERSION:
        raise ValueError(f"head importance schema version {importance.get('version')!r}, expected {VERSION}")
    H = importance["shape"]["n_heads"]
    base = importance["baseline"]
    sl = importance["slice"]
    lines = [
        f"Head importance on {sl['sentences']} val sentences ({sl['selection']}); all heads on: val loss "
        f"{base['val_loss']:.3f}, greedy BLEU {base['val_bleu']:.2f}. Each cell: val loss increase / BLEU change "
        "when that head alone is switched off.",
        "",
        "| attention | layer | " + " | ".join(f"head {h + 1}" for h in range(H)) + " |",
        "|---|---|" + "---|" * H,
    ]
    for kind, label in zip(KINDS, ("encoder self", "decoder self", "cross")):
        off = importance["kinds"][kind]["switched_off"]
        for layer, losses in enumerate(off["val_loss"]):
            cells = [
                f"{loss - base['val_loss']:+.3f} / {bleu - base['val_bleu']:+.1f}"
                for loss, bleu in zip(losses, off["val_bleu"][layer])
            ]
            lines.append(f"| {label} | {layer + 1} | " + " | ".join(cells) + " |")
    cross = importance["kinds"]["cross"]
    if "agreement" in cross:
        scores = np.array(cross["agreement"])
        best_layer, best_head = np.unravel_index(scores.argmax(), scores.shape)
        method = importance["method"]["attribution"]["method"].replace("_", " ")
        lines += [
            "",
            f"Cross-attention that agrees best with attribution ({method}): layer {best_layer + 1} head "
            f"{best_head + 1}, whose strongest source token is the most-attributed one for "
            f"{scores[best_layer, best_head]:.0%} of {importance['agreement_tokens']} target tokens.",
        ]
    return "\n".join(lines) + "\n"


def read_importance(path, config=None) -> dict:
    """head_importance.json, checked entry by entry (against `config`'s layers and heads when given);
    anything wrong is a CheckpointFileError naming the file and the entry."""
    heads = None if config is None else config.n_heads * (config.n_encoder_layers + 2 * config.n_decoder_layers)
    cap = MAX_FILE_BYTES if heads is None else BASE_BYTES + BYTES_PER_HEAD * heads
    return checked_importance(read_json(path, cap, MAX_DEPTH), path, config)


def checked_importance(record, path, config=None) -> dict:
    """`record` if it is what head_importance() writes: every figure finite, every grid layers x heads."""
    checked_object(record, path, "the file", ("version", "shape", "slice", "method", "baseline", "kinds"))
    if record["version"] != VERSION:
        raise refused(path, "version", record["version"], f"{VERSION}, the schema this code reads")
    shape = checked_shape(record["shape"], path, config)
    baseline = checked_object(record["baseline"], path, "baseline", ("val_loss", "val_bleu"))
    checked_figure(baseline["val_loss"], path, "baseline.val_loss", 0, 1e6)
    checked_figure(baseline["val_bleu"], path, "baseline.val_bleu", 0, 100)
    sentences = checked_object(record["slice"], path, "slice", ("sentences",))["sentences"]
    if not is_whole(sentences, 1):
        raise refused(path, "slice.sentences", sentences, "a whole number of at least 1")
    attribution = checked_object(
        checked_object(record["method"], path, "method", ("attribution",))["attribution"],
        path,
        "method.attribution",
        ("method",),
    )["method"]
    if attribution not in METHODS:
        raise refused(path, "method.attribution.method", attribution, f"one of {', '.join(METHODS)}")
    if "agreement_tokens" in record and not is_whole(record["agreement_tokens"]):
        raise refused(path, "agreement_tokens", record["agreement_tokens"], "a whole number of at least 0")
    kinds = checked_object(record["kinds"], path, "kinds", KINDS, KINDS)
    for kind in KINDS:
        checked_kind(kinds[kind], path, kind, shape[kind], shape["n_heads"])
    return record


def checked_shape(shape, path, config=None) -> dict:
    """The record's {"n_heads", "encoder", "decoder", "cross"}: whole numbers, the model's when `config` is given."""
    checked_object(shape, path, "shape", ("n_heads", *KINDS))
    for key in ("n_heads", *KINDS):
        if not is_whole(shape[key], 1, MAX_LAYERS):
            raise refused(path, f"shape.{key}", shape[key], f"a whole number from 1 to {MAX_LAYERS}")
    if shape["cross"] != shape["decoder"]:
        raise CheckpointFileError(
            f"{path}: shape has {shape['cross']} cross layers for {shape['decoder']} decoder layers"
        )
    if config is not None:
        model = {"n_heads": config.n_heads, **{kind: layers_of(config, kind) for kind in KINDS}}
        if any(shape[key] != n for key, n in model.items()):
            raise CheckpointFileError(
                f"{path}: shape is {shape}, the model has {model}: it was measured on another model"
            )
    return shape


def checked_kind(figures, path, kind: str, layers: int, heads: int) -> None:
    """One kind's figures: switched_off and only (val_loss, val_bleu), importance, and for cross the agreement."""
    where = f"kinds.{kind}"
    checked_object(figures, path, where, ("switched_off", "only", "importance"))
    for variant in ("switched_off", "only"):
        scores = checked_object(figures[variant], path, f"{where}.{variant}", ("val_loss", "val_bleu"))
        checked_grid(scores["val_loss"], path, f"{where}.{variant}.val_loss", (layers, heads), 0, 1e6)
        checked_grid(scores["val_bleu"], path, f"{where}.{variant}.val_bleu", (layers, heads), 0, 100)
    checked_grid(figures["importance"], path, f"{where}.importance", (layers, heads), -1e6, 1e6)
    if "agreement" in figures:
        checked_grid(figures["agreement"], path, f"{where}.agreement", (layers, heads), 0, 1)
    if "agreement_mean_heads" in figures:
        checked_grid(figures["agreement_mean_heads"], path, f"{where}.agreement_mean_heads", (layers,), 0, 1)


def checked_grid(grid, path, where: str, shape: tuple[int, ...], low: float, high: float) -> None:
    """Nested lists of `shape` (layers, heads) holding finite numbers from `low` to `high`."""
    if not isinstance(grid, list) or len(grid) != shape[0]:
        raise refused(
            path, where, grid, f"a list of {shape[0]}" + (f" lists of {shape[1]} numbers" if shape[1:] else " numbers")
        )
    for i, row in enumerate(grid):
        if len(shape) > 1:
            checked_grid(row, path, f"{where}[{i}]", shape[1:], low, high)
        else:
            checked_figure(row, path, f"{where}[{i}]", low, high)


def checked_figure(value, path, where: str, low: float, high: float) -> None:
    if not is_finite(value, low, high):
        raise refused(path, where, value, f"a finite number from {low:g} to {high:g}")
