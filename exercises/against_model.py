"""The second and third checks: the learner's function against the shipped model, on one sentence.

The model runs once with a tap (model/taps.py) that records every intermediate. The value check
recomputes each tap an exercise writes from the taps before it, with the learner's function, and
names the first that differs and the line of model/ that offers it. The swap check runs greedy
decoding with the learner's function in the place of the model's (a tap that replaces the value) and
asks for the same English.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from model.attention import padding_mask, target_mask
from model.tap_names import tap_names
from model.transformer import Transformer
from translation.translator import Translator

from . import solutions as ok
from .words import say

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = ROOT / "checkpoints" / "de-en"
SENTENCE = "Ich möchte ein Bier."


@dataclass
class Run:
    """One sentence through the shipped model: its greedy translation and every tap on the way."""

    translator: Translator
    src: Tensor  # (1, S)
    tgt_in: Tensor  # (1, T): BOS and the translation but its last token
    english: str
    taps: dict[str, Tensor]  # every intermediate of the teacher-forced pass, in the order offered

    @property
    def model(self) -> Transformer:
        return self.translator.model


@functools.lru_cache(maxsize=2)
def run_sentence(sentence: str = SENTENCE, checkpoint: str = str(CHECKPOINT)) -> Run:
    """The model loaded once, the sentence translated (greedy) and its taps recorded."""
    translator = Translator.from_pretrained(checkpoint, device="cpu")
    model = translator.model
    src = torch.tensor([translator.encode_source(sentence)[0]])  # (1, S)
    tokens = greedy(model, src, ok.greedy_step)  # (1, 1 + T)
    taps: dict[str, Tensor] = {}

    def record(name: str, value: Tensor) -> None:
        taps[name] = value.detach().clone()

    with torch.no_grad():
        model(src, tokens[:, :-1], return_attention=True, tap=record)
    return Run(translator, src, tokens[:, :-1], translator.decode(tokens[0].tolist()), taps)


@torch.no_grad()
def greedy(model: Transformer, src: Tensor, step: Callable, tap: Callable | None = None) -> Tensor:
    """(1, S) -> (1, 1 + T): BOS and the greedy translation, one full forward pass a step (no cache)."""
    config = model.config
    tokens = torch.full((1, 1), config.bos_id, dtype=torch.long)
    for _ in range(2 * src.size(1) + 10):
        tokens = step(lambda t: model(src, t, return_attention=True, tap=tap)[0], tokens)  # (1, t + 1)
        if int(tokens[0, -1]) == config.eos_id:
            break
    return tokens


# ----- where each exercise's value sits among the taps ----------------------------------------


def _module_of(model: Transformer, name: str):
    """The deepest module a tap name lives in: "decoder.1.cross_attn.q" -> decoder_layers[1].cross_attn."""
    parts = name.split(".")[:-1]
    if len(parts) >= 2 and parts[1].isdigit():
        parts = [f"{parts[0]}_layers", *parts[1:]]
    module = model
    for part in parts:
        if not hasattr(module, part) and not part.isdigit():
            break
        module = module[int(part)] if part.isdigit() else getattr(module, part)
    return module


def tap_line(model: Transformer, name: str) -> str:
    """Where model/ offers the tap `name`: "model/attention.py:57: <the line>", found in the source."""
    leaf = name.split(".")[-1]
    pattern = re.compile(rf'(offer\(.*|tap\()"{re.escape(leaf)}"')
    own = Path(inspect.getsourcefile(type(_module_of(model, name))))
    for path in [own, *sorted((ROOT / "model").glob("*.py"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                return f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
    return say("values.no_line")


def stream_into(sublayer: str, order: list[str]) -> str:
    """The tap holding the stream a sublayer ("encoder.1.ff") reads: the last .embed or .resid before it."""
    first = next((i for i, n in enumerate(order) if n.startswith(sublayer + ".")), len(order))
    stack = sublayer.split(".")[0]
    return next(n for n in reversed(order[:first]) if n.startswith(stack + ".") and n.endswith((".embed", ".resid")))


def _norm_of(model: Transformer, sublayer: str, order: list[str]):
    """The LayerNorm of a sublayer: the k-th sublayer of a layer has norm{k+1}."""
    layer = sublayer.rsplit(".", 1)[0]
    subs = list(dict.fromkeys(n.rsplit(".", 1)[0] for n in order if n.startswith(layer + ".")))
    return getattr(_module_of(model, layer + ".x"), f"norm{subs.index(sublayer) + 1}")


def _rows(attn, part: int) -> Callable[[Tensor], Tensor]:
    """W_Q (part 0), W_K (1) or W_V (2): a slice of the stacked in_proj, as a function of x (B, L, D)."""
    D = attn.d_model
    return lambda x: F.linear(
        x, attn.in_proj.weight[part * D : (part + 1) * D], attn.in_proj.bias[part * D : (part + 1) * D]
    )


def _mask(name: str, src: Tensor, tgt: Tensor, pad_id: int) -> Tensor:
    return (
        target_mask(tgt, pad_id) if name.startswith("decoder.") and ".self_attn." in name else padding_mask(src, pad_id)
    )


def writes(exercise: str, name: str) -> bool:
    """Whether the exercise's function computes the tap `name`."""
    leaf, sub = name.split(".")[-1], name.rsplit(".", 1)[0]
    return {
        "add_positional_encoding": leaf == "embed",
        "split_heads": leaf in ("q", "k", "v"),
        "attention": leaf in ("weights", "heads"),
        "merge_heads": leaf == "out" and sub.endswith("_attn"),
        "post_ln_sublayer": leaf == "resid",
        "cross_attention": sub.endswith("cross_attn") and leaf in ("weights", "out"),
    }.get(exercise, False)


def recompute(exercise: str, fn: Callable, name: str, seen: dict[str, Tensor], model: Transformer, src, tgt) -> Tensor:
    """The learner's value for the tap `name`, from the taps `seen` before it (in the order offered)."""
    leaf, sub = name.split(".")[-1], name.rsplit(".", 1)[0]
    order, pad_id = list(seen), model.config.pad_id
    if exercise == "add_positional_encoding":
        return fn(seen[f"{sub}.tokens"] * math.sqrt(model.config.d_model))
    attn = _module_of(model, name)
    if exercise == "split_heads":
        source = seen["encoder.out"] if sub.endswith("cross_attn") and leaf != "q" else seen[stream_into(sub, order)]
        return fn(_rows(attn, "qkv".index(leaf))(source), attn.n_heads)
    if exercise == "attention":
        out, weights = fn(seen[f"{sub}.q"], seen[f"{sub}.k"], seen[f"{sub}.v"], _mask(name, src, tgt, pad_id))
        return weights if leaf == "weights" else out
    if exercise == "merge_heads":
        return attn.out_proj(fn(seen[f"{sub}.heads"]))
    if exercise == "post_ln_sublayer":
        out = seen[f"{sub}.out"]
        return fn(seen[stream_into(sub, order)], lambda _: out, _norm_of(model, sub, order))
    if exercise == "cross_attention":
        x, memory = seen[stream_into(sub, order)], seen["encoder.out"]
        W_Q, W_K, W_V = (_rows(attn, part) for part in range(3))
        out, weights = fn(x, memory, padding_mask(src, pad_id), W_Q, W_K, W_V, attn.out_proj, attn.n_heads)
        return weights if leaf == "weights" else out
    raise KeyError(exercise)


# ----- the two checks ---------------------------------------------------------------------------


def values(exercise: str, fn: Callable, run: Run) -> str | None:
    """None when the learner's function gives every tap it writes (atol 1e-4), else the first that differs."""
    model, taps = run.model, run.taps
    if exercise == "greedy_step":
        return _greedy_values(fn, run)
    order = [n for n in tap_names(model.config) if n in taps]
    with torch.no_grad():
        for i, name in enumerate(order):
            if not writes(exercise, name):
                continue
            seen = {n: taps[n] for n in order[:i]}
            mine, theirs = recompute(exercise, fn, name, seen, model, run.src, run.tgt_in), taps[name]
            where = tap_line(model, name)
            if tuple(mine.shape) != tuple(theirs.shape):
                return say("values.shape", name=name, theirs=tuple(theirs.shape), mine=tuple(mine.shape), where=where)
            difference = float((mine - theirs).abs().max())
            if not difference <= 1e-4:
                return say("values.differ", name=name, difference=f"{difference:.3g}", where=where)
    return None


def _greedy_values(fn: Callable, run: Run) -> str | None:
    logits, tokens = run.taps["logits"], run.tgt_in  # (1, T, V), (1, T)
    where = tap_line(run.model, "logits")
    for t in range(1, tokens.size(1) + 1):
        mine = fn(lambda prefix: logits[:, : prefix.size(1)], tokens[:, :t])
        want = torch.cat([tokens[:, :t], logits[:, t - 1].argmax(dim=-1)[:, None]], dim=1)
        if not torch.equal(mine, want):
            return say("values.greedy", t=t, mine=mine.tolist(), want=want.tolist(), where=where)
    return None


def swap(exercise: str, fn: Callable, run: Run) -> str | None:
    """None when the model, with the learner's function in it, translates the sentence as before."""
    model, src = run.model, run.src
    if exercise == "greedy_step":
        tokens = greedy(model, src, fn)
    else:
        tokens = greedy(model, src, ok.greedy_step, _replacing_tap(exercise, fn, model, src))
    english = run.translator.decode(tokens[0].tolist())
    if english != run.english:
        shown = CHECKPOINT.relative_to(ROOT) if CHECKPOINT.is_relative_to(ROOT) else CHECKPOINT.name
        return say("swap.translation", got=repr(english), want=repr(run.english), checkpoint=f"{shown}, greedy")
    return None


def _replacing_tap(exercise: str, fn: Callable, model: Transformer, src: Tensor) -> Callable:
    """A tap that records each value and puts the learner's in the place of every tap the exercise writes."""
    seen: dict[str, Tensor] = {}
    tgt: list[Tensor] = []

    def tap(name: str, value: Tensor) -> Tensor | None:
        if name == "encoder.tokens":
            seen.clear()
        if name == "decoder.tokens":  # the target's length: read off its embedding, (1, T, D)
            tgt[:] = [torch.ones(1, value.size(1), dtype=torch.long)]
        replaced = (
            recompute(exercise, fn, name, seen, model, src, tgt[0] if tgt else None) if writes(exercise, name) else None
        )
        seen[name] = value if replaced is None else replaced
        return replaced

    return tap
