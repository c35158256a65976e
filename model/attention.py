"""Scaled dot-product attention, multi-head attention and the masks they take.

Shape legend: B batch, H heads, L query length, M key length, D model width (d_model),
d_k head width (D // H). Masks are boolean and True where attention is allowed; they
broadcast to (B, H, L, M).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .taps import Tapped, offer


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
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    need_weights: bool = False,
    tap: Tapped | None = None,
) -> tuple[Tensor, Tensor | None]:
    """softmax(Q K^T / sqrt(d_k)) V for q (B, H, L, d_k), k and v (B, H, M, d_k).

    Returns the output (B, H, L, d_k) and, when `need_weights`, the post-softmax weights
    (B, H, L, M) before dropout, which `tap` sees as "scores" and "weights". Without weights the fused
    PyTorch kernel does the same sum.
    """
    if not need_weights:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        return out, None

    scores = offer(tap, "scores", q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)))  # (B, H, L, M)
    if mask is not None:
        # -inf rather than a large negative number: a masked key then gets exactly zero weight
        # in every dtype (a -1e9 would overflow in fp16 and leak weight in bf16).
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    if mask is not None:
        # A row whose keys are all masked is all -inf and softmaxes to NaN; give it zero weight
        # everywhere instead, which is what the fused kernel returns for such a row.
        weights = weights.masked_fill(~mask, 0.0)
    weights = offer(tap, "weights", weights)
    out = F.dropout(weights, p=dropout_p) @ v  # (B, H, L, d_k)
    return out, weights


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

    def project_qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Queries, keys and values of x (B, L, D) attending to itself, each (B, H, L, d_k)."""
        B, L, D = x.shape
        q, k, v = self.in_proj(x.reshape(B * L, D)).view(B, L, 3 * D).split(D, dim=-1)  # 3 x (B, L, D)
        return self.split_heads(q), self.split_heads(k), self.split_heads(v)

    def project_query(self, x: Tensor) -> Tensor:
        """Queries of x (B, L, D), (B, H, L, d_k): the W_Q rows alone, for cross-attention."""
        B, L, D = x.shape
        q = F.linear(x.reshape(B * L, D), self.in_proj.weight[:D], self.in_proj.bias[:D])  # (B*L, D)
        return self.split_heads(q.view(B, L, D))

    def project_memory(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values of the encoder memory (B, M, D), each (B, H, M, d_k)."""
        D = self.d_model
        kv = F.linear(memory, self.in_proj.weight[D:], self.in_proj.bias[D:])  # (B, M, 2D)
        k, v = kv.split(D, dim=-1)
        return self.split_heads(k), self.split_heads(v)

    def attend_heads(
        self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
        tap: Tapped | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """The heads' attention, concatenated before W_O: (B*L, D), and the weights (B, H, L, M) or None.

        `head_mask` (H,) scales each head's output before W_O: 0.0 switches a head off.
        """
        dropout_p = self.dropout if self.training else 0.0
        out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p, need_weights, tap)  # (B, H, L, d_k)
        if head_mask is not None:
            out = out * head_mask.view(1, -1, 1, 1)  # a 1.0 leaves a head's output bit for bit
        out = offer(tap, "heads", out)
        B, H, L, d_k = out.shape
        return out.transpose(1, 2).reshape(B * L, H * d_k), weights  # (B*L, D): heads concatenated

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        mask: Tensor | None = None,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
        tap: Tapped | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from x (B, L, D) to itself, or (cross) to the encoder `memory` (B, M, D).

        Returns the output (B, L, D) and the weights (B, H, L, M) or None. `tap` (model/taps.py)
        sees q, k, v, heads and out, and with `need_weights` the scores and weights. (Generation runs the same projections one
        token at a time: generation/step.py.)
        """
        if self.cross:
            assert memory is not None, "cross-attention attends to the encoder memory"
            q = self.project_query(x)  # (B, H, L, d_k)
            k, v = self.project_memory(memory)  # (B, H, M, d_k)
        else:
            q, k, v = self.project_qkv(x)  # (B, H, L, d_k)
        if tap is not None:
            q, k, v = tap("q", q), tap("k", k), tap("v", v)
        out, weights = self.attend_heads(q, k, v, mask, need_weights, head_mask, tap)  # (B*L, D)
        B, L, D = x.shape
        return offer(tap, "out", self.out_proj(out).view(B, L, D)), weights
