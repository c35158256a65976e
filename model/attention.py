"""Scaled dot-product attention, multi-head attention, masks and the key/value cache.

Shape legend: B batch, H heads, L query length, M key length, D model width (d_model),
d_k head width (D // H). Masks are boolean and True where attention is allowed; they
broadcast to (B, H, L, M).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """(B, M) token ids -> (B, 1, 1, M): True at real tokens, so no query attends to padding."""
    return (ids != pad_id)[:, None, None, :]


def causal_mask(length: int, device: torch.device | None = None) -> Tensor:
    """(1, 1, T, T) lower-triangular: position t may attend to positions <= t, never the future."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()[None, None]


def target_mask(tgt: Tensor, pad_id: int) -> Tensor:
    """(B, T) target ids -> (B, 1, T, T): causal and blind to target padding."""
    return causal_mask(tgt.size(1), tgt.device) & padding_mask(tgt, pad_id)


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0, need_weights: bool = False
) -> tuple[Tensor, Tensor | None]:
    """softmax(Q K^T / sqrt(d_k)) V for q (B, H, L, d_k), k and v (B, H, M, d_k).

    Returns the output (B, H, L, d_k) and, when `need_weights`, the post-softmax weights
    (B, H, L, M) before dropout. Without weights the fused PyTorch kernel does the same sum.
    """
    if not need_weights:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        return out, None

    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, L, M)
    if mask is not None:
        # -inf rather than a large negative number: a masked key then gets exactly zero weight
        # in every dtype (a -1e9 would overflow in fp16 and leak weight in bf16).
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    if mask is not None:
        # A row whose keys are all masked is all -inf and softmaxes to NaN; give it zero weight
        # everywhere instead, which is what the fused kernel returns for such a row.
        weights = weights.masked_fill(~mask, 0.0)
    out = F.dropout(weights, p=dropout_p) @ v  # (B, H, L, d_k)
    return out, weights


@dataclass
class KVCache:
    """Keys and values of one self-attention layer, preallocated for `capacity` positions.

    During generation each step appends the new token's key and value, and attends to all
    the steps so far, instead of recomputing them from the whole prefix.
    """

    key: Tensor  # (B, H, capacity, d_k)
    value: Tensor  # (B, H, capacity, d_k)
    length: int = 0

    @classmethod
    def empty(cls, batch: int, n_heads: int, capacity: int, d_k: int, like: Tensor) -> "KVCache":
        key = like.new_empty(batch, n_heads, capacity, d_k)
        return cls(key=key, value=torch.empty_like(key))

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write k, v (B, H, n, d_k) after the cached steps; return all keys and values so far."""
        end = self.length + k.size(2)
        if end > self.key.size(2):
            raise RuntimeError(f"KVCache is full: capacity {self.key.size(2)}, asked for {end} positions")
        self.key[:, :, self.length : end] = k
        self.value[:, :, self.length : end] = v
        self.length = end
        return self.key[:, :, :end], self.value[:, :, :end]  # (B, H, end, d_k)

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows `index` (beam search picks its survivors); only the used steps move."""
        self.key = _reorder_prefix(self.key, index, self.length)
        self.value = _reorder_prefix(self.value, index, self.length)


def _reorder_prefix(buffer: Tensor, index: Tensor, n: int) -> Tensor:
    """Rows `index` of buffer with its first n steps copied; the rest stays uninitialised scratch."""
    rows = buffer[:, :, :n].index_select(0, index)  # (len(index), H, n, d_k)
    if index.numel() == buffer.size(0):
        buffer[:, :, :n] = rows  # same batch size: reuse the buffer in place
        return buffer
    out = buffer.new_empty(index.numel(), *buffer.shape[1:])
    out[:, :, :n] = rows
    return out


class MultiHeadAttention(nn.Module):
    """H heads of scaled dot-product attention over learned projections, concatenated.

    The query, key and value projections are stacked in one (3D, D) matrix, the layout of
    torch.nn.MultiheadAttention: one matmul for self-attention, and for cross-attention the
    query rows on the decoder state and the key/value rows on the encoder memory.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, cross: bool = False):
        super().__init__()
        assert d_model % n_heads == 0, "d_model must be divisible by n_heads"
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.dropout = dropout
        self.cross = cross
        self.in_proj = nn.Linear(d_model, 3 * d_model)  # rows: W_Q, W_K, W_V
        self.out_proj = nn.Linear(d_model, d_model)  # W_O

    def split_heads(self, x: Tensor) -> Tensor:
        B, L, _ = x.shape
        return x.view(B, L, self.n_heads, self.d_k).transpose(1, 2)  # (B, H, L, d_k)

    def project_memory(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values of the encoder memory (B, M, D), each (B, H, M, d_k)."""
        D = self.d_model
        kv = F.linear(memory, self.in_proj.weight[D:], self.in_proj.bias[D:])  # (B, M, 2D)
        k, v = kv.split(D, dim=-1)
        return self.split_heads(k), self.split_heads(v)

    def forward(
        self, x: Tensor, memory: Tensor | None = None, mask: Tensor | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from x (B, L, D) to itself, or (cross) to the encoder `memory` (B, M, D).

        Returns the output (B, L, D) and the weights (B, H, L, M) or None. (Generation does the
        same sums one token at a time, with a KVCache: see model/step.py.)
        """
        D = self.d_model
        if self.cross:
            q = self.split_heads(F.linear(x, self.in_proj.weight[:D], self.in_proj.bias[:D]))  # (B, H, L, d_k)
            k, v = self.project_memory(memory)  # (B, H, M, d_k)
        else:
            q, k, v = self.in_proj(x).split(D, dim=-1)  # 3 x (B, L, D)
            q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)  # (B, H, L, d_k)

        dropout_p = self.dropout if self.training else 0.0
        out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p, need_weights)
        B, H, L, d_k = out.shape
        out = out.transpose(1, 2).reshape(B, L, H * d_k)  # (B, L, D): heads concatenated
        return self.out_proj(out), weights
