"""The decoder one token at a time, for generation.

`CachedDecoder` computes what `DecoderLayer.forward` computes, for the newest token only:
- self-attention keys/values of earlier steps come from a preallocated KVCache;
- the encoder memory's keys/values are projected once per sentence, and a sentence's beams
  attend to them together, as K queries of one attention;
- weights are transposed once per `generate` call, so that every step multiplies its rows by
  contiguous (in, out) matrices, and no module, mask or view is rebuilt per step.
`UncachedDecoder` re-runs the full decoder over the prefix: the reference that the tests and
bench/decode.py hold the cached one to (same tokens).

Shape legend: B sentences, K beams per sentence, N = B * K rows, S source length, t tokens so
far, D model width, H heads, d_k head width, V vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from .attention import KVCache, scaled_dot_product_attention
from .layers import DecoderLayer


@dataclass
class StepWeights:
    """One decoder layer's parameters laid out for single-token steps: each matrix (in, out)."""

    qkv: tuple[Tensor, Tensor]  # (D, 3D), (3D,)
    out: tuple[Tensor, Tensor]  # (D, D), (D,)
    cross_q: tuple[Tensor, Tensor]  # (D, D), (D,)
    cross_out: tuple[Tensor, Tensor]  # (D, D), (D,)
    ff1: tuple[Tensor, Tensor]  # (D, d_ff), (d_ff,)
    ff2: tuple[Tensor, Tensor]  # (d_ff, D), (D,)
    norms: list[tuple[Tensor, Tensor]]  # norm1, norm2, norm3: (D,), (D,)

    @classmethod
    def of(cls, layer: DecoderLayer) -> "StepWeights":
        def t(linear_weight: Tensor, bias: Tensor) -> tuple[Tensor, Tensor]:
            return linear_weight.t().contiguous(), bias

        D = layer.self_attn.d_model
        cross = layer.cross_attn.in_proj
        return cls(
            qkv=t(layer.self_attn.in_proj.weight, layer.self_attn.in_proj.bias),
            out=t(layer.self_attn.out_proj.weight, layer.self_attn.out_proj.bias),
            cross_q=t(cross.weight[:D], cross.bias[:D]),
            cross_out=t(layer.cross_attn.out_proj.weight, layer.cross_attn.out_proj.bias),
            ff1=t(layer.ff.linear1.weight, layer.ff.linear1.bias),
            ff2=t(layer.ff.linear2.weight, layer.ff.linear2.bias),
            norms=[(n.weight, n.bias) for n in (layer.norm1, layer.norm2, layer.norm3)],
        )


def _linear(x: Tensor, weight_bias: tuple[Tensor, Tensor]) -> Tensor:
    weight, bias = weight_bias
    return torch.addmm(bias, x, weight)  # x W + b, W already (in, out)


class CachedDecoder:
    """Next-token logits from the newest token, remembering what earlier steps computed."""

    def __init__(self, model, memory: Tensor, src_mask: Tensor, num_beams: int, capacity: int):
        """memory (B, S, D), src_mask (B, 1, 1, S) bool: one entry per sentence, not per beam."""
        c = model.config
        self.config = c
        self.num_beams = num_beams
        self.layers = [StepWeights.of(layer) for layer in model.decoder_layers]
        self.eps = model.decoder_layers[0].norm1.eps
        self.final_norm = (model.decoder_norm.weight, model.decoder_norm.bias) if c.norm_first else None
        self.embedding = model.embed.weight  # (V, D), also the output projection (tied)
        self.embed_scale = math.sqrt(c.d_model)
        self.pe = model.pos.pe  # (max_len, D)
        rows = memory.size(0) * num_beams
        self.self_caches = [KVCache.empty(rows, c.n_heads, capacity, c.d_k, like=memory) for _ in self.layers]
        self.memory_kv = [layer.cross_attn.project_memory(memory) for layer in model.decoder_layers]  # (B, H, S, d_k)
        # Padding as an additive mask, built once: 0 on real source tokens, -inf on padding.
        self.memory_mask = torch.zeros(src_mask.shape, dtype=memory.dtype, device=memory.device)
        self.memory_mask.masked_fill_(~src_mask, float("-inf"))  # (B, 1, 1, S)

    def _norm(self, x: Tensor, weight_bias: tuple[Tensor, Tensor]) -> Tensor:
        return F.layer_norm(x, x.shape[-1:], weight_bias[0], weight_bias[1], self.eps)

    def _residual(self, x: Tensor, sublayer, norm: tuple[Tensor, Tensor]) -> Tensor:
        """Post-LN norm(x + f(x)) as in the paper, or Pre-LN x + f(norm(x))."""
        if self.config.norm_first:
            return x + sublayer(self._norm(x, norm))
        return self._norm(x + sublayer(x), norm)

    def _self_attention(self, x: Tensor, w: StepWeights, cache: KVCache) -> Tensor:
        N, H, d_k = x.size(0), self.config.n_heads, self.config.d_k
        q, k, v = _linear(x, w.qkv).view(N, 3, H, 1, d_k).unbind(1)  # 3 x (N, H, 1, d_k)
        keys, values = cache.append(k, v)  # (N, H, t, d_k): no mask, every cached step is in the past
        out, _ = scaled_dot_product_attention(q, keys, values)  # (N, H, 1, d_k)
        return _linear(out.reshape(N, H * d_k), w.out)  # (N, D)

    def _cross_attention(self, x: Tensor, w: StepWeights, memory_kv: tuple[Tensor, Tensor]) -> Tensor:
        N, H, d_k = x.size(0), self.config.n_heads, self.config.d_k
        keys, values = memory_kv  # (B, H, S, d_k)
        B = keys.size(0)
        q = _linear(x, w.cross_q).view(B, N // B, H, d_k).transpose(1, 2)  # (B, H, K, d_k): beams as queries
        out, _ = scaled_dot_product_attention(q, keys, values, self.memory_mask)  # (B, H, K, d_k)
        return _linear(out.transpose(1, 2).reshape(N, H * d_k), w.cross_out)  # (N, D)

    def _feed_forward(self, x: Tensor, w: StepWeights) -> Tensor:
        return _linear(F.relu(_linear(x, w.ff1)), w.ff2)  # (N, D) -> (N, d_ff) -> (N, D)

    def __call__(self, tokens: Tensor) -> Tensor:
        """tokens (N, t) -> logits (N, V) of token t+1; only tokens[:, -1] is new."""
        position = tokens.size(1) - 1
        x = F.embedding(tokens[:, -1], self.embedding) * self.embed_scale + self.pe[position]  # (N, D)
        for w, cache, memory_kv in zip(self.layers, self.self_caches, self.memory_kv):
            x = self._residual(x, lambda h: self._self_attention(h, w, cache), w.norms[0])
            x = self._residual(x, lambda h: self._cross_attention(h, w, memory_kv), w.norms[1])
            x = self._residual(x, lambda h: self._feed_forward(h, w), w.norms[2])
        if self.final_norm is not None:
            x = self._norm(x, self.final_norm)
        return F.linear(x, self.embedding)  # (N, V)

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        """Keep decoder rows `rows`; when sentences leave the batch, keep `sentences` (indices)."""
        for cache in self.self_caches:
            cache.reorder(rows)
        if sentences is not None:
            self.memory_kv = [(k.index_select(0, sentences), v.index_select(0, sentences)) for k, v in self.memory_kv]
            self.memory_mask = self.memory_mask.index_select(0, sentences)


class UncachedDecoder:
    """Next-token logits by running the whole decoder over the prefix (the reference)."""

    def __init__(self, model, memory: Tensor, src_mask: Tensor, num_beams: int, capacity: int):
        self.model = model
        self.memory = memory.repeat_interleave(num_beams, dim=0)  # (N, S, D): rows b*K .. b*K+K-1
        self.src_mask = src_mask.repeat_interleave(num_beams, dim=0)  # (N, 1, 1, S)

    def __call__(self, tokens: Tensor) -> Tensor:
        hidden, _, _ = self.model.decode(tokens, self.memory, self.src_mask)  # (N, t, D)
        return self.model.lm_head(hidden[:, -1])  # (N, V)

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        if sentences is not None:
            self.memory = self.memory[rows]
            self.src_mask = self.src_mask[rows]
