"""One cell of one attention map, opened up: the query, the keys, their dot products, the scaling, the
mask, the softmax, and the values it mixes.

Attention computes, for one row (a query position) of one head,
    weights = softmax(mask(K q / sqrt(d_k)))      output = weights V       row output = concat(heads) W_O
(Vaswani et al. 2017, eq. 1). `qkv()` replays the model's teacher-forced pass over a sentence and its
translation up to the chosen layer and returns every one of these quantities for one row, computed
from the layer's own weights, so that `weights` is exactly the row of the map the page draws.

Shape legend: d_k head width, D model width, M columns of the map (source or target tokens).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from model.attention import padding_mask, target_mask
from model.heads import KINDS
from tokenizer import token_strings
from translation.translator import Translator

from .cost import checked_whole
from .explain import DecodingOptions, decode_one
from .stream import attention_name, read


@dataclass
class OpenedRow:
    """Everything behind one row of one head's map (layer, head and row counted from 1)."""

    kind: str
    layer: int
    head: int
    row: int
    row_token: str  # the token whose state asks (for decoder and cross: the decoder's input at that row)
    writes: str | None  # decoder and cross: the English token that row writes; None for the encoder
    column_tokens: list[str]
    q: list[float]  # (d_k,) the query of the row
    k: list[list[float]]  # (M, d_k) one key per column
    v: list[list[float]]  # (M, d_k) one value per column
    scores: list[float]  # (M,) K q
    scaled: list[float]  # (M,) scores / sqrt(d_k)
    mask: list[bool]  # (M,) True where the row may look
    weights: list[float]  # (M,) softmax of the scaled, masked scores: the map's row
    head_output: list[float]  # (d_k,) weights V: this head's part of the row, before W_O
    output: list[float]  # (D,) the row after W_O: every head concatenated, then projected

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def checked_position(kind, layer, head, row, config, rows: int) -> tuple[str, int, int, int]:
    """Refuse (ValueError naming the argument) a kind, layer, head or row the sentence does not have."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    layers = config.n_encoder_layers if kind == "encoder" else config.n_decoder_layers
    return (
        kind,
        checked_whole(layer, "layer", 1, layers, " (counted from 1)"),
        checked_whole(head, "head", 1, config.n_heads, " (counted from 1)"),
        checked_whole(row, "row", 1, rows, " (counted from 1)"),
    )


def opened(model, src: torch.Tensor, tgt: torch.Tensor, kind: str, layer: int) -> dict[str, torch.Tensor]:
    """The `kind` attention of `layer` (from 1) in the teacher-forced pass: its q, k, v and out, and its mask."""
    name = attention_name(kind, layer - 1)
    seen, _ = read(model, src, tgt, [f"{name}.{part}" for part in ("q", "k", "v", "out")])
    values = {part: seen[f"{name}.{part}"][0] for part in ("q", "k", "v", "out")}  # batch of one
    pad = model.config.pad_id
    values["mask"] = padding_mask(src, pad) if kind != "decoder" else target_mask(tgt, pad)
    return values


@torch.inference_mode()
def qkv(
    translator: Translator,
    text: str,
    kind: str,
    layer: int,
    head: int,
    row: int,
    options: DecodingOptions | None = None,
) -> OpenedRow:
    """Translate one sentence, then open up row `row` of head `head` of the `kind` map of layer `layer`."""
    sentence = decode_one(translator, text, options)  # the translation alone: the row is computed here
    source_tokens, input_tokens = (
        token_strings(translator.tokenizer, ids) for ids in (sentence.source_ids, sentence.input_ids)
    )
    rows = len(source_tokens) if kind == "encoder" else len(input_tokens)
    kind, layer, head, row = checked_position(kind, layer, head, row, translator.config, max(rows, 1))
    device = translator.device
    src = torch.tensor([sentence.source_ids], device=device)  # (1, S)
    tgt = torch.tensor([sentence.input_ids], device=device)  # (1, T): BOS + the translation but its last piece
    parts = opened(translator.model, src, tgt, kind, layer)
    i, j = head - 1, row - 1
    q, k, v = parts["q"][i, j], parts["k"][i], parts["v"][i]  # (d_k,), (M, d_k), (M, d_k)
    scores = k @ q  # (M,)
    scaled = scores / math.sqrt(translator.config.d_k)
    allowed = parts["mask"].expand(1, 1, parts["q"].size(1), k.size(0))[0, 0, j]  # (M,)
    weights = scaled.masked_fill(~allowed, float("-inf")).softmax(-1).masked_fill(~allowed, 0.0)
    columns = source_tokens if kind != "decoder" else input_tokens
    row_tokens = source_tokens if kind == "encoder" else input_tokens
    writes = None if kind == "encoder" else token_strings(translator.tokenizer, sentence.output_ids[j : j + 1])[0]
    return OpenedRow(
        kind,
        layer,
        head,
        row,
        row_tokens[j],
        writes,
        list(columns),
        q.tolist(),
        k.tolist(),
        v.tolist(),
        scores.tolist(),
        scaled.tolist(),
        allowed.tolist(),
        weights.tolist(),
        (weights @ v).tolist(),
        parts["out"][j].tolist(),
    )
