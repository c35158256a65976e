"""The seven exercises solved: what `python -m exercises selftest` checks the checks against.

Shape legend: B batch, L query length, M key length, S source length, T target length, h heads,
d_k head width, D model width (d_model = h * d_k), V vocabulary. Masks are boolean, True where
attention is allowed, and broadcast to (B, h, L, M). Read these after writing your own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor


def add_positional_encoding(x: Tensor) -> Tensor:
    """x (B, L, D) + PE (L, D): PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D))."""
    B, L, D = x.shape
    pos = torch.arange(L, dtype=torch.float32)[:, None]  # (L, 1)
    two_i = torch.arange(0, D, 2, dtype=torch.float32)  # (D/2,): 0, 2, 4, ...
    angle = pos / 10000 ** (two_i / D)  # (L, D/2)
    pe = torch.zeros(L, D)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return x + pe.to(x.dtype)  # (L, D) broadcast over the batch: every sentence gets the same positions


def split_heads(x: Tensor, h: int) -> Tensor:
    """(B, L, D) -> (B, h, L, d_k): head j takes columns j*d_k .. (j+1)*d_k - 1 of every position."""
    B, L, D = x.shape
    d_k = D // h
    x = x.view(B, L, h, d_k)  # (B, L, h, d_k): the last axis cut into h pieces
    return x.transpose(1, 2)  # (B, h, L, d_k): the heads before the positions


def attention(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """softmax(Q K^T / sqrt(d_k)) V for Q (B, h, L, d_k), K and V (B, h, M, d_k).

    Returns the output (B, h, L, d_k) and the weights (B, h, L, M); no weight where mask is False.
    """
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, L, M)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # a masked key gets exactly zero weight
    weights = scores.softmax(dim=-1)  # each query's row sums to 1 over the keys
    return weights @ V, weights  # (B, h, L, d_k), (B, h, L, M)


def merge_heads(x: Tensor) -> Tensor:
    """(B, h, L, d_k) -> (B, L, D): the heads concatenated, the inverse of split_heads."""
    B, h, L, d_k = x.shape
    x = x.transpose(1, 2)  # (B, L, h, d_k): the positions first again
    return x.reshape(B, L, h * d_k)  # (B, L, D): head j's d_k values side by side


def post_ln_sublayer(x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: Callable[[Tensor], Tensor]) -> Tensor:
    """Post-LN, the paper's: LayerNorm(x + Sublayer(x)) for x (B, L, D)."""
    residual = x + sublayer(x)  # (B, L, D): the sublayer adds to the stream
    return norm(residual)  # the LayerNorm comes last


def cross_attention(
    x: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    W_Q: Callable[[Tensor], Tensor],
    W_K: Callable[[Tensor], Tensor],
    W_V: Callable[[Tensor], Tensor],
    W_O: Callable[[Tensor], Tensor],
    h: int,
) -> tuple[Tensor, Tensor]:
    """The decoder state x (B, T, D) attends to the encoder memory (B, S, D); src_mask (B, 1, 1, S).

    Returns the output (B, T, D) and the weights (B, h, T, S).
    """
    Q = split_heads(W_Q(x), h)  # (B, h, T, d_k): the questions come from the target
    K = split_heads(W_K(memory), h)  # (B, h, S, d_k): the answers are looked up in the source
    V = split_heads(W_V(memory), h)  # (B, h, S, d_k)
    out, weights = attention(Q, K, V, src_mask)  # (B, h, T, d_k), (B, h, T, S): never the source's padding
    return W_O(merge_heads(out)), weights  # (B, T, D)


def greedy_step(logits_of: Callable[[Tensor], Tensor], tokens: Tensor) -> Tensor:
    """tokens (B, t) so far -> (B, t + 1): the most likely next token appended.

    logits_of(tokens) runs the decoder and returns the logits (B, t, V), one row per position.
    """
    logits = logits_of(tokens)  # (B, t, V)
    next_token = logits[:, -1].argmax(dim=-1)  # (B,): the last position predicts the next token
    return torch.cat([tokens, next_token[:, None]], dim=1)  # (B, t + 1)
