"""The building blocks of the paper: positional encoding, feed-forward, encoder and decoder layers.

Shape legend: B batch, S source length, T target length, H heads, D model width (d_model),
d_k head width.
Every sublayer is wrapped in a residual connection and LayerNorm: Post-LN
(x = norm(x + sublayer(x)), the paper) or Pre-LN (x = x + sublayer(norm(x)), `norm_first`),
written once in `ResidualLayer.sublayer`. (Generation runs the decoder layer one token at a time
with a key/value cache: generation/step.py.)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import MultiHeadAttention
from .taps import Tapped, offer, under

SublayerOutput = tuple[Tensor, Tensor | None]  # (output, attention weights or None)


class PositionalEncoding(nn.Module):
    """Adds the sinusoids PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...).

    A buffer, not a parameter: it is a fixed function of the position, so it is not learned
    and not written to model.safetensors (persistent=False).
    """

    pe: Tensor  # (max_len, D), the buffer registered in __init__

    def __init__(self, d_model: int, max_len: int):
        super().__init__()
        position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
        inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * inv_freq)
        pe[:, 1::2] = torch.cos(position * inv_freq)
        self.register_buffer("pe", pe, persistent=False)  # (max_len, D)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x (B, L, D) holds positions offset .. offset+L-1 (offset > 0 when decoding step by step)."""
        length = x.size(1)
        if offset + length > self.pe.size(0):
            raise ValueError(f"sequence of {offset + length} positions is longer than max_len={self.pe.size(0)}")
        return x + self.pe[offset : offset + length].to(x.dtype)


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position separately."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, tap: Tapped | None = None) -> Tensor:
        hidden = offer(tap, "hidden", F.relu(self.linear1(x)))  # (B, L, D) -> (B, L, d_ff)
        return offer(tap, "out", self.linear2(self.dropout(hidden)))  # -> (B, L, D)


class ResidualLayer(nn.Module):
    """The residual connection and LayerNorm around every sublayer, with the Post-LN/Pre-LN switch."""

    def __init__(self, dropout: float, norm_first: bool):
        super().__init__()
        self.norm_first = norm_first
        self.dropout = nn.Dropout(dropout)  # on each sublayer's output, before the residual sum

    def sublayer(
        self,
        x: Tensor,
        norm: Callable[[Tensor], Tensor],
        f: Callable[[Tensor], SublayerOutput],
        tap: Tapped | None = None,
    ) -> SublayerOutput:
        """Post-LN norm(x + f(x)) as in the paper, or Pre-LN x + f(norm(x)); f's weights pass through.
        `tap` sees the stream after the sublayer as "resid"."""
        out, weights = f(norm(x) if self.norm_first else x)
        if self.training:  # generation skips the call: nine a step add up
            out = self.dropout(out)
        return offer(tap, "resid", x + out if self.norm_first else norm(x + out)), weights


class EncoderLayer(ResidualLayer):
    """Self-attention over the source, then the feed-forward network."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False):
        super().__init__(dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(
        self,
        x: Tensor,
        src_mask: Tensor | None,
        need_weights: bool = False,
        heads: Tensor | None = None,
        tap: Tapped | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """x (B, S, D), src_mask (B, 1, 1, S) -> (B, S, D) and the self-attention weights (B, H, S, S).

        `heads` (H,): 1.0 keeps a head, 0.0 switches it off (model/heads.py). `tap`: model/taps.py.
        """
        attn_tap, ff_tap = under(tap, "self_attn"), under(tap, "ff")
        x, weights = self.sublayer(
            x,
            self.norm1,
            lambda h: self.self_attn(h, mask=src_mask, need_weights=need_weights, head_mask=heads, tap=attn_tap),
            attn_tap,
        )
        x, _ = self.sublayer(x, self.norm2, lambda h: (self.ff(h, ff_tap), None), ff_tap)
        return x, weights


class DecoderLayer(ResidualLayer):
    """Masked self-attention over the target so far, cross-attention to the source, feed-forward."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False):
        super().__init__(dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout, cross=True)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None,
        tgt_mask: Tensor | None,
        need_weights: bool = False,
        self_heads: Tensor | None = None,
        cross_heads: Tensor | None = None,
        tap: Tapped | None = None,
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """x (B, T, D), memory (B, S, D) -> (B, T, D), self weights (B, H, T, T), cross weights (B, H, T, S).

        `self_heads`, `cross_heads` (H,): 1.0 keeps a head, 0.0 switches it off. `tap`: model/taps.py.
        """
        self_tap, cross_tap, ff_tap = under(tap, "self_attn"), under(tap, "cross_attn"), under(tap, "ff")
        x, self_weights = self.sublayer(
            x,
            self.norm1,
            lambda h: self.self_attn(h, mask=tgt_mask, need_weights=need_weights, head_mask=self_heads, tap=self_tap),
            self_tap,
        )
        x, cross_weights = self.sublayer(
            x,
            self.norm2,
            lambda h: self.cross_attn(
                h, memory, mask=src_mask, need_weights=need_weights, head_mask=cross_heads, tap=cross_tap
            ),
            cross_tap,
        )
        x, _ = self.sublayer(x, self.norm3, lambda h: (self.ff(h, ff_tap), None), ff_tap)
        return x, self_weights, cross_weights
