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
from model.translator import Translator
from tokenizer import token_strings

from .arguments import checked_whole
from .explain import DecodingOptions, decode_one



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
    return (kind, checked_whole(layer, "layer", 1, layers, " (counted from 1)"),
            checked_whole(head, "head", 1, config.n_heads, " (counted from 1)"),
            checked_whole(row, "row", 1, rows, " (counted from 1)"))


def _inputs(model, src: torch.Tensor, tgt: torch.Tensor, kind: str, layer: int):
    """The attention module of (kind, layer), its query-side input (1, L, D), key/value input (1, M, D) and mask."""
    src_mask = padding_mask(src, model.config.pad_id)
    x = model.embed_tokens(src)
    for encoder_layer in model.encoder_layers[: layer - 1 if kind == "encoder" else len(model.encoder_layers)]:
        x, _ = encoder_layer(x, src_mask)
    if kind == "encoder":
        norm = model.encoder_layers[layer - 1].norm1
        h = norm(x) if model.config.norm_first else x
        return model.encoder_layers[layer - 1].self_attn, h, h, src_mask
    memory = model.encoder_norm(x)
    tgt_mask = target_mask(tgt, model.config.pad_id)
    y = model.embed_tokens(tgt)
    for decoder_layer in model.decoder_layers[: layer - 1]:
        y, _, _ = decoder_layer(y, memory, src_mask, tgt_mask)
    current = model.decoder_layers[layer - 1]
    if kind == "decoder":
        h = current.norm1(y) if model.config.norm_first else y
        return current.self_attn, h, h, tgt_mask
    y, _ = current.sublayer(y, current.norm1, lambda h: current.self_attn(h, mask=tgt_mask))
    h = current.norm2(y) if model.config.norm_first else y
    return current.cross_attn, h, memory, src_mask


@torch.inference_mode()
def qkv(translator: Translator, text: str, kind: str, layer: int, head: int, row: int,
        options: DecodingOptions | None = None) -> OpenedRow:
    """Translate one sentence, then open up row `row` of head `head` of the `kind` map of layer `layer`."""
    sentence = decode_one(translator, text, options)  # the translation alone: the row is computed here
    source_tokens, input_tokens = (token_strings(translator.tokenizer, ids) for ids in (sentence.source_ids, sentence.input_ids))
    rows = len(source_tokens) if kind == "encoder" else len(input_tokens)
    kind, layer, head, row = checked_position(kind, layer, head, row, translator.config, max(rows, 1))
    model, device = translator.model, translator.device
    src = torch.tensor([sentence.source_ids], device=device)  # (1, S)
    tgt = torch.tensor([sentence.input_ids], device=device)  # (1, T): BOS + the translation but its last piece
    attention, h, memory_side, mask = _inputs(model, src, tgt, kind, layer)
    if kind == "cross":
        q_all, (k_all, v_all) = attention.project_query(h), attention.project_memory(memory_side)
    else:
        q_all, k_all, v_all = attention.project_qkv(h)  # (1, H, L, d_k) each
    i, j = head - 1, row - 1
    q, k, v = q_all[0, i, j], k_all[0, i], v_all[0, i]  # (d_k,), (M, d_k), (M, d_k)
    scores = k @ q  # (M,)
    scaled = scores / math.sqrt(attention.d_k)
    allowed = mask.expand(1, 1, q_all.size(2), k.size(0))[0, 0, j]  # (M,)
    weights = scaled.masked_fill(~allowed, float("-inf")).softmax(-1).masked_fill(~allowed, 0.0)
    concat, _ = attention.attend_heads(q_all, k_all, v_all, mask)  # (L, D): every head of every row
    columns = source_tokens if kind != "decoder" else input_tokens
    row_tokens = source_tokens if kind == "encoder" else input_tokens
    writes = None if kind == "encoder" else token_strings(translator.tokenizer, sentence.output_ids[j : j + 1])[0]
    return OpenedRow(kind, layer, head, row, row_tokens[j], writes, list(columns), q.tolist(), k.tolist(), v.tolist(),
                     scores.tolist(), scaled.tolist(), allowed.tolist(), weights.tolist(), (weights @ v).tolist(),
                     attention.out_proj(concat[j]).tolist())

