"""Write it yourself: the seven pieces of the Transformer, in the order the tutorials build them.

Replace each `raise NotImplementedError("write me")` with your code, then run
`python -m exercises check NAME` (or the notebook exercises/exercises.ipynb) to see what is right.

Shape legend: B batch, L query length, M key length, S source length, T target length, h heads,
d_k head width, D model width (d_model = h * d_k), V vocabulary. Masks are boolean, True where
attention is allowed, and broadcast to (B, h, L, M).
"""

from __future__ import annotations

import math  # noqa: F401 (math.sqrt, for attention)
from collections.abc import Callable

import torch  # noqa: F401 (torch.arange, torch.sin, torch.cat, ...)
from torch import Tensor


def add_positional_encoding(x: Tensor) -> Tensor:
    """x (B, L, D) + PE (L, D): PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D))."""
    raise NotImplementedError("write me")


def split_heads(x: Tensor, h: int) -> Tensor:
    """(B, L, D) -> (B, h, L, d_k): head j takes columns j*d_k .. (j+1)*d_k - 1 of every position.

    d_k = D // h. Hint: view, then transpose.
    """
    raise NotImplementedError("write me")


def attention(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """softmax(Q K^T / sqrt(d_k)) V for Q (B, h, L, d_k), K and V (B, h, M, d_k).

    Returns the output (B, h, L, d_k) and the weights (B, h, L, M); no weight where mask is False.
    """
    raise NotImplementedError("write me")


def merge_heads(x: Tensor) -> Tensor:
    """(B, h, L, d_k) -> (B, L, D): the heads concatenated, the inverse of split_heads."""
    raise NotImplementedError("write me")


def post_ln_sublayer(x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: Callable[[Tensor], Tensor]) -> Tensor:
    """Post-LN, the paper's: LayerNorm(x + Sublayer(x)) for x (B, L, D)."""
    raise NotImplementedError("write me")


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

    Returns the output (B, T, D) and the weights (B, h, T, S). Build it from your split_heads,
    attention and merge_heads; W_Q, W_K, W_V and W_O are functions (B, L, D) -> (B, L, D).
    """
    raise NotImplementedError("write me")


def greedy_step(logits_of: Callable[[Tensor], Tensor], tokens: Tensor) -> Tensor:
    """tokens (B, t) so far -> (B, t + 1): the most likely next token appended.

    logits_of(tokens) runs the decoder and returns the logits (B, t, V), one row per position.
    """
    raise NotImplementedError("write me")
