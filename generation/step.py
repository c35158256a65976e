"""The decoder one token at a time, for generation: the decoding step and two step decoders.

A step decoder turns the tokens so far into the next token's logits. `CachedDecoder` runs
`decode_step` on the newest token only: the same layers as `Transformer.decode`, with decoder
self-attention keys/values of earlier steps from a KVCache (generation/cache.py) that grows with the
output, the encoder memory's keys/values projected once per sentence, and the matrices laid out for
steps (generation/step_weights.py, fp32 or int8), built once per set of weights.
`UncachedDecoder` re-runs the full decoder over the prefix: the reference that the tests and
bench/decode.py hold the cached one to (same tokens, same maps).

Shape legend: B sentences, K beams per sentence, N = B * K rows, S source length, t tokens so
far, D model width, H heads, d_k head width, V vocabulary.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, cast

import torch
import torch.nn.functional as F
from torch import Tensor

from model.heads import HeadMask
from model.layers import DecoderLayer
from model.transformer import Transformer

from .cache import KVCache, moved_rows
from .step_linear import StepMatrix, single_threaded_blas
from .step_weights import DecoderStepWeights, StepWeights, step_weights


@dataclass
class StepAttention:
    """Post-softmax attention rows of the newest token, one tensor per decoder layer."""

    decoder: list[Tensor]  # each (N, H, t): over the tokens read so far (BOS first)
    cross: list[Tensor]  # each (N, H, S): over the source


class StepDecoder(Protocol):
    """What greedy and beam search need of a decoder: next-token logits, and beams reordered."""

    def __call__(self, tokens: Tensor, need_weights: bool = False) -> tuple[Tensor, StepAttention | None]:
        """tokens (N, t) -> logits (N, V) of token t+1, and this step's attention rows when asked."""

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        """Keep decoder rows `rows`; when sentences leave the batch, keep `sentences` (indices into B)."""


def memory_kv(model: Transformer, memory: Tensor) -> list[tuple[Tensor, Tensor]]:
    """Every decoder layer's cross-attention keys and values of memory (B, S, D): (B, H, S, d_k) each."""
    layers = cast(Iterable[DecoderLayer], model.decoder_layers)  # Transformer builds them of DecoderLayer only
    return [layer.cross_attn.project_memory(memory) for layer in layers]


def self_attention_step(
    attention,
    x: Tensor,
    cache: KVCache,
    weights: tuple[StepMatrix, StepMatrix],
    need_weights: bool = False,
    head_mask: Tensor | None = None,
) -> tuple[Tensor, Tensor | None]:
    """Self-attention of the newest token x (N, D) over itself and the cached earlier ones: (N, D) and the
    weights (N, H, 1, t); the token's key and value join the cache."""
    in_proj, out_proj = weights
    N = x.size(0)
    q, k, v = in_proj(x).view(N, 3, attention.n_heads, 1, attention.d_k).unbind(1)  # 3 x (N, H, 1, d_k)
    keys, values = cache.append(k, v)  # (N, H, t, d_k): no mask, every cached step is in the past
    out, attn = attention.attend_heads(q, keys, values, None, need_weights, head_mask)  # (N, D)
    return out_proj(out), attn


def cross_attention_step(
    attention,
    x: Tensor,
    kv: tuple[Tensor, Tensor],
    mask: Tensor,
    weights: tuple[StepMatrix, StepMatrix],
    need_weights: bool = False,
    head_mask: Tensor | None = None,
) -> tuple[Tensor, Tensor | None]:
    """Cross-attention of the newest token x (N, D) of K = N / B beams per sentence, over the memory's keys
    and values kv (B, H, S, d_k) each; mask (B, 1, 1, S). Returns (N, D) and the weights (N, H, 1, S)."""
    query_proj, out_proj = weights
    keys, values = kv
    B, N, H = keys.size(0), x.size(0), attention.n_heads
    # A sentence's K beams attend to its memory together, as K queries of one attention.
    q = query_proj(x).view(B, N // B, H, attention.d_k).transpose(1, 2)  # (B, H, K, d_k)
    out, attn = attention.attend_heads(q, keys, values, mask, need_weights, head_mask)  # (N, D): rows b*K+k
    if attn is not None:
        attn = attn.transpose(1, 2).reshape(N, H, 1, keys.size(2))  # (N, H, 1, S)
    return out_proj(out), attn


def layer_step(
    layer,
    x: Tensor,
    cache: KVCache,
    kv: tuple[Tensor, Tensor],
    src_mask: Tensor,
    weights: DecoderStepWeights,
    need_weights: bool = False,
    self_heads: Tensor | None = None,
    cross_heads: Tensor | None = None,
) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """`DecoderLayer.forward` for the newest token only: x (N, D) -> (N, D), self weights (N, H, 1, t), cross
    (N, H, 1, S); its three sublayers through the layer's own residual-and-LayerNorm rule."""
    norm1, norm2, norm3 = weights.norms
    linear1, linear2 = weights.ff
    x, self_weights = layer.sublayer(
        x, norm1, lambda h: self_attention_step(layer.self_attn, h, cache, weights.self_attn, need_weights, self_heads)
    )
    x, cross_weights = layer.sublayer(
        x,
        norm2,
        lambda h: cross_attention_step(
            layer.cross_attn, h, kv, src_mask, weights.cross_attn, need_weights, cross_heads
        ),
    )
    x, _ = layer.sublayer(x, norm3, lambda h: (linear2(F.relu(linear1(h))), None))  # (N, D) -> (N, d_ff) -> (N, D)
    return x, self_weights, cross_weights


def decode_step(
    model: Transformer,
    tgt_last: Tensor,
    position: int,
    caches: list[KVCache],
    kv: list[tuple[Tensor, Tensor]],
    weights: StepWeights,
    src_mask: Tensor,
    need_weights: bool = False,
    head_mask: HeadMask | None = None,
) -> tuple[Tensor, list[Tensor], list[Tensor]]:
    """`Transformer.decode` + the output layer for the newest token only: tgt_last (N, 1) at `position` ->
    logits (N, V), self-attention rows (N, H, 1, t), cross-attention rows (N, H, 1, S).

    src_mask (B, 1, 1, S): bool, or additive (0 / -inf) when no weights are asked for.
    """
    x = model.embed_tokens(tgt_last, offset=position)[:, 0]  # (N, D)
    self_maps, cross_maps = [], []
    for i, (layer, cache, layer_kv, layer_weights) in enumerate(zip(model.decoder_layers, caches, kv, weights.layers)):
        self_heads, cross_heads = (None, None) if head_mask is None else (head_mask.decoder[i], head_mask.cross[i])
        x, self_weights, cross_weights = layer_step(
            layer, x, cache, layer_kv, src_mask, layer_weights, need_weights, self_heads, cross_heads
        )
        if need_weights:
            assert self_weights is not None and cross_weights is not None  # computed when asked for
            self_maps.append(self_weights)
            cross_maps.append(cross_weights)
    return weights.lm_head(model.decoder_norm(x)), self_maps, cross_maps  # (N, V)


class CachedDecoder:
    """Next-token logits from the newest token, remembering what earlier steps computed."""

    def __init__(
        self,
        model: Transformer,
        memory: Tensor,
        src_mask: Tensor,
        num_beams: int,
        capacity: int,
        head_mask: HeadMask | None = None,
        precision: str = "fp32",
    ):
        """memory (B, S, D), src_mask (B, 1, 1, S) bool: one entry per sentence, not per beam.

        `precision` "int8" multiplies by int8 weights (generation/step_linear.py); "fp32" is exact.
        """
        c = model.config
        self.model = model
        self.head_mask = head_mask
        rows = memory.size(0) * num_beams
        self.self_caches = [
            KVCache.empty(rows, c.n_heads, capacity, c.d_k, like=memory) for _ in range(c.n_decoder_layers)
        ]
        self.memory_kv = memory_kv(model, memory)  # per layer, (B, H, S, d_k) each
        self.step_weights = step_weights(model, precision)
        single_threaded_blas()
        self.src_mask = src_mask
        # The fused kernel takes padding fastest as an additive mask, built once: 0 on real source
        # tokens, -inf on padding. The weights path keeps the boolean one.
        self.src_bias = torch.zeros(src_mask.shape, dtype=memory.dtype, device=memory.device)
        self.src_bias.masked_fill_(~src_mask, float("-inf"))  # (B, 1, 1, S)

    def shortlist(self, candidates: Tensor) -> None:
        """From now on the output layer multiplies only the rows `candidates` (generation/shortlist.py)."""
        from .shortlist import ShortlistedOutput

        head = self.model.lm_head
        output = ShortlistedOutput(head.weight.detach(), head.bias, candidates, head.weight.size(0))
        self.step_weights = dataclasses.replace(self.step_weights, lm_head=output)

    def __call__(self, tokens: Tensor, need_weights: bool = False) -> tuple[Tensor, StepAttention | None]:
        logits, self_rows, cross_rows = decode_step(
            self.model,
            tokens[:, -1:],
            tokens.size(1) - 1,
            self.self_caches,
            self.memory_kv,
            self.step_weights,
            self.src_mask if need_weights else self.src_bias,
            need_weights,
            self.head_mask,
        )
        if not need_weights:
            return logits, None
        return logits, StepAttention(decoder=[w[:, :, 0] for w in self_rows], cross=[w[:, :, 0] for w in cross_rows])

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        moved = moved_rows(rows, self.self_caches[0].key.size(0)) if self.self_caches else None
        for cache in self.self_caches:
            cache.reorder(rows, moved)
        if sentences is not None:
            self.memory_kv = [(k.index_select(0, sentences), v.index_select(0, sentences)) for k, v in self.memory_kv]
            self.src_mask = self.src_mask.index_select(0, sentences)
            self.src_bias = self.src_bias.index_select(0, sentences)


class UncachedDecoder:
    """Next-token logits by running the whole decoder over the prefix (the reference)."""

    def __init__(
        self,
        model: Transformer,
        memory: Tensor,
        src_mask: Tensor,
        num_beams: int,
        capacity: int,
        head_mask: HeadMask | None = None,
        precision: str = "fp32",
    ):
        """`precision` is taken for a common signature; the reference always runs the fp32 modules."""
        self.model = model
        self.head_mask = head_mask
        self.memory = memory.repeat_interleave(num_beams, dim=0)  # (N, S, D): rows b*K .. b*K+K-1
        self.src_mask = src_mask.repeat_interleave(num_beams, dim=0)  # (N, 1, 1, S)

    def __call__(self, tokens: Tensor, need_weights: bool = False) -> tuple[Tensor, StepAttention | None]:
        hidden, self_maps, cross_maps = self.model.decode(
            tokens, self.memory, self.src_mask, need_weights=need_weights, head_mask=self.head_mask
        )  # (N, t, D)
        logits = self.model.lm_head(hidden[:, -1])  # (N, V)
        if not need_weights:
            return logits, None
        return logits, StepAttention(decoder=[w[:, :, -1] for w in self_maps], cross=[w[:, :, -1] for w in cross_maps])

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        if sentences is not None:
            self.memory = self.memory[rows]
            self.src_mask = self.src_mask[rows]
