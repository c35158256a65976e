"""What the head lab sends to the browser: head specs parsed, ablations and attributions as payloads.

No Gradio here (ui/head_lab.py wires the widgets, ui/api.py the endpoint): plain functions of a
translator and a sentence that return JSON-ready dicts. Maps travel as quantize bytes, so the
browser draws them with the same viewer as the translate view.

Shape legend: L layers of a kind, H heads, S source tokens, T target tokens.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from lens.ablate import HeadMask, switched_off_heads, word_diff
from lens.attribute import (
    BASELINE,
    METHODS,
    agreement,
    attribute_ids,
    special_token_masks,
    translate_ids,
)
from lens.cost import (
    PAGE,
    check_after,
    check_attribution,
    check_before,
    estimated_target,
)
from lens.explain import DecodingOptions, words_of
from lens.importance import FILE as IMPORTANCE_FILE
from lens.importance import (  # KINDS: model.heads's, through lens
    KINDS,
    layers_of,
    ranked_heads,
    read_importance,
)
from lens.maps import teacher_forced
from tokenizer.sentences import split_sentences
from training_data.alarm import Familiarity
from training_data.checked_json import optional
from training_data.confidence import UNFAMILIAR_BELOW, looks_unfamiliar, mean_log_prob
from ui.payload import quantize, sentence_payload

from .runtime import checked_unicode

MAX_CHARACTERS = 500  # one sentence, with room; longer input is refused before any work
MAX_STEPS = 64  # integrated-gradients steps a user may ask for


def first_sentence(text) -> tuple[str, int]:
    """The sentence the lab works on and how many more sentences the text had (left out)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text: please enter a German sentence")
    if len(text) > MAX_CHARACTERS:
        raise ValueError(
            f"text has {len(text):,} characters; the head lab takes one sentence of at most {MAX_CHARACTERS} characters"
        )
    sentences = split_sentences(checked_unicode(text, "text")) or [text.strip()]
    return sentences[0], len(sentences) - 1


def load_importance(model_id: str, revision: str | None = None, config=None) -> dict | None:
    """head_importance.json beside the checkpoint (a folder, or the Hub repo's cached file), checked entry by
    entry (against `config`, the model's, when given); None when there is none, and None with a one-line
    warning naming the file when it is refused: the page then shows the grid without figures."""
    path = Path(model_id) / IMPORTANCE_FILE
    if not path.is_file():
        try:
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(model_id, IMPORTANCE_FILE, revision=revision))
        except Exception:  # not on the Hub, offline, or no such file: the page says so
            return None
    return optional(lambda: read_importance(path, config), "the head-importance figures are off")


def importance_payload(importance: dict | None, config) -> dict:
    """The page's share of head_importance.json: per kind a layer x head grid of each figure."""
    layers = {kind: layers_of(config, kind) for kind in KINDS}
    base = {"layers": layers, "heads": config.n_heads, "importance": None}
    shape = (importance or {}).get("shape", {})
    if not importance or shape.get("n_heads") != config.n_heads or any(shape.get(k) != n for k, n in layers.items()):
        return base
    baseline, metrics = importance["baseline"], {}
    for kind in KINDS:
        k = importance["kinds"][kind]
        metrics[kind] = {
            "loss": k["importance"],
            "bleu": np.round(baseline["val_bleu"] - np.array(k["switched_off"]["val_bleu"]), 2).tolist(),
            "only": np.round(np.array(k["only"]["val_loss"]) - baseline["val_loss"], 4).tolist(),
        }
        if "agreement" in k:
            metrics[kind]["agreement"] = k["agreement"]
    ranked = [[kind, layer, head, round(value, 5)] for kind, layer, head, value in ranked_heads(importance)]
    return {
        **base,
        "importance": {
            "baseline": baseline,
            "slice": importance["slice"]["sentences"],
            "metrics": metrics,
            "ranked": ranked,
            "attribution": importance["method"]["attribution"]["method"],
        },
    }


def output_ids(translator, src_ids: list[int], options: DecodingOptions, head_mask=None) -> list[int]:
    """lens.attribute.translate_ids with the view's decoding options."""
    return translate_ids(
        translator, src_ids, options.num_beams, options.length_penalty, options.max_new_tokens, head_mask
    )


def viewer_payload(
    translator, sentence: str, explanation, src_ids, out_ids, options: DecodingOptions, ms: float
) -> dict:
    """One explanation in the translate view's format (ui.payload.page_payload), for AL.Viewer."""
    c = translator.config
    words = {
        "src": words_of(translator, src_ids, explanation.source_tokens),
        "tgt": words_of(translator, out_ids, explanation.target_tokens),
        "in": words_of(translator, [c.bos_id] + out_ids[:-1], explanation.decoder_input_tokens),
    }
    probs = explanation.target_probs
    return {
        "v": 1,
        "id": time.time_ns(),
        "heads": c.n_heads,
        "max_len": c.max_len,
        "threshold": UNFAMILIAR_BELOW,
        "layers": {"encoder": c.n_encoder_layers, "decoder": c.n_decoder_layers, "cross": c.n_decoder_layers},
        "options": options.to_dict(),
        "left_out": 0,
        "status": {"method": "ablated", "ms": round(ms), "device": translator.device.type.upper()},
        "sentences": [sentence_payload(sentence, explanation, words, mean_log_prob(probs), looks_unfamiliar(probs))],
    }


def ablation_payload(
    translator, text: str, head_mask: HeadMask, options: DecodingOptions, familiarity: Familiarity | None = None
) -> dict:
    """Translate one sentence with every head on and with `head_mask`; the diff and the ablated maps.
    The same translations as lens.ablate.ablate (tested), with the ids kept for the word grouping."""
    sentence, left_out = first_sentence(text)
    head_mask.check(translator.config)
    src_ids, truncated = translator.encode_source(sentence)
    check_before(PAGE, translator.config, [len(src_ids)], options.max_new_tokens)
    start = time.perf_counter()
    original_ids = output_ids(translator, src_ids, options)
    middle = time.perf_counter()
    ablated_ids = output_ids(translator, src_ids, options, head_mask)
    check_after(PAGE, translator.config, [(len(src_ids), len(ablated_ids))])
    explanation = teacher_forced(translator, src_ids, ablated_ids, head_mask, truncated)
    ms = (time.perf_counter() - middle) * 1000
    original = translator.decode(original_ids)
    diff = word_diff(original, explanation.translation)
    mask_dict = head_mask.to_dict()
    report = (familiarity or Familiarity()).report(
        sentence, teacher_forced(translator, src_ids, original_ids).target_probs
    )
    return {
        "id": time.time_ns(),
        "sentence": sentence,
        "left_out": left_out,
        "original": original,
        "ablated": explanation.translation,
        "diff": diff.to_dict(),
        "changed": original_ids != ablated_ids,
        "head_mask": mask_dict,
        "switched_off": [list(h) for h in switched_off_heads(mask_dict)],
        "ms": {"original": round((middle - start) * 1000), "ablated": round(ms)},
        "explanation": viewer_payload(translator, sentence, explanation, src_ids, ablated_ids, options, ms),
        "unfamiliar": report["unfamiliar"],
        "reasons": report["reasons"],
        "alarms": report.get("alarms", []),
    }


def attribution_shares(scores: np.ndarray) -> np.ndarray:
    """(T, S) signed attributions -> each row's positive part as shares that add up to 1 (0 if none)."""
    positive = np.clip(scores, 0.0, None)
    total = positive.sum(axis=1, keepdims=True)
    return np.divide(positive, total, out=np.zeros_like(positive), where=total > 0)


def attribution_payload(
    translator, text: str, method: str, steps: int, options: DecodingOptions, head_mask: HeadMask | None = None
) -> dict:
    """Cross-attention and attribution of one sentence on the same axes, and their agreement: of the model
    with `head_mask`'s heads switched off (the head lab's grid), or with every head on."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, float)) or not 1 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be a whole number from 1 to {MAX_STEPS}, got {steps!r}")
    steps = int(steps) if method == "integrated_gradients" else 1
    sentence, left_out = first_sentence(text)
    c = translator.config
    src_ids, _ = translator.encode_source(sentence)
    S = len(src_ids)
    check_attribution(steps, S, estimated_target(S, options.max_new_tokens))  # before decoding
    out_ids = output_ids(translator, src_ids, options, head_mask)
    check_attribution(steps, S, len(out_ids))  # before the gradients
    start = time.perf_counter()
    result = attribute_ids(translator.model, src_ids, out_ids, method, steps, head_mask)
    ms = (time.perf_counter() - start) * 1000
    explanation = teacher_forced(translator, src_ids, out_ids, head_mask)  # cross: (L, H, T, S)
    per_head, per_layer, counted = agreement(
        explanation.cross, result.scores, *special_token_masks(c, src_ids, out_ids)
    )
    payload = viewer_payload(translator, sentence, explanation, src_ids, out_ids, options, ms)["sentences"][0]
    shares = attribution_shares(result.scores)  # (T, S)
    return {
        "id": time.time_ns(),
        "sentence": sentence,
        "left_out": left_out,
        "translation": explanation.translation,
        "heads_off": [] if head_mask is None else [list(h) for h in switched_off_heads(head_mask.to_dict())],
        "method": method,
        "steps": steps,
        "baseline": BASELINE if method == "integrated_gradients" else None,
        "ms": round(ms),
        "heads": c.n_heads,
        "layers": c.n_decoder_layers,
        "tokens": payload["tokens"],
        "words": payload["words"],
        "maps": {"cross": payload["maps"]["cross"]},
        "attribution": quantize(shares[None, None]),  # (1, 1, T, S)
        "completeness_gap": round(float(np.abs(result.completeness_gap).max(initial=0.0)), 4),
        "agreement": {
            "per_head": np.round(per_head.astype(float), 3).tolist(),
            "per_layer": np.round(per_layer.astype(float), 3).tolist(),
            "mean": round(float(per_layer.mean()), 3) if len(per_layer) else 0.0,
            "tokens": counted,
        },
    }
