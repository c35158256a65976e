"""Taps: the forward pass offers each intermediate by name to a callback that may read it or replace it.

`Transformer.forward`, `encode` and `decode` take `tap`, a function (name, value) -> None or a
tensor: None leaves the value as it is, a tensor (of the same shape) takes its place from there on.
Nothing is registered on the modules, so two calls with different taps can run at once.
Every lens view (the maps, Q/K/V, the logit lens, who-wrote, patching) reads its numbers here.

The names, with i the layer counted from 0 as in `encoder_layers[i]` (B batch, S source and T target
length, L and M the rows and columns of one attention, H heads, d_k head width, D model width,
d_ff the feed-forward width, V vocabulary):

    encoder.tokens               (B, S, D)     the token embedding, before the sqrt(D) scale
    encoder.embed                (B, S, D)     scaled, plus the positional encoding: the stream's start
    encoder.{i}.self_attn.q      (B, H, L, d_k) the queries
    encoder.{i}.self_attn.k      (B, H, M, d_k) the keys
    encoder.{i}.self_attn.v      (B, H, M, d_k) the values
    encoder.{i}.self_attn.scores (B, H, L, M)  Q K^T / sqrt(d_k), before the mask
    encoder.{i}.self_attn.weights (B, H, L, M) the softmax of the masked scores: the attention map
    encoder.{i}.self_attn.heads  (B, H, L, d_k) each head's weights V, after the head mask, before W_O
    encoder.{i}.self_attn.out    (B, L, D)     the heads concatenated, times W_O
    encoder.{i}.self_attn.resid  (B, L, D)     the stream after the sublayer (Post-LN: the LayerNorm's output)
    encoder.{i}.ff.hidden        (B, L, d_ff)  max(0, x W1 + b1)
    encoder.{i}.ff.out           (B, L, D)     the feed-forward network's output
    encoder.{i}.ff.resid         (B, L, D)     the stream after it: the layer's output
    encoder.out                  (B, S, D)     the memory the decoder reads
    decoder.tokens, decoder.embed, decoder.{i}.self_attn.*, decoder.{i}.cross_attn.*, decoder.{i}.ff.*,
    decoder.out                  (B, T, D)     as above, for the target (cross_attn's k and v: the memory's)
    logits                       (B, T, V)     forward() only

The scores and weights exist where the maps are asked for (`need_weights`, `return_attention`):
attention then runs the written-out softmax(Q K^T / sqrt(d_k)) V; without, the fused kernel computes
the same sum and offers neither. `tap_names(config)` (model/tap_names.py) lists every name for a config,
read off the forward pass.
"""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor

Tap = Callable[[str, Tensor], "Tensor | None"]  # what a caller passes: None leaves the value as it is
Tapped = Callable[[str, Tensor], Tensor]  # what the layers call: it returns the value to use


def tapped(tap: Tap | None) -> Tapped | None:
    """The callback as the layers call it: it always returns the value to use (the replacement or the value)."""
    if tap is None:
        return None

    def offer(name: str, value: Tensor) -> Tensor:
        replaced = tap(name, value)
        if replaced is None:
            return value
        if not isinstance(replaced, Tensor) or replaced.shape != value.shape:
            got = tuple(replaced.shape) if isinstance(replaced, Tensor) else type(replaced).__name__
            raise ValueError(f"the tap put {got} in the place of {name!r}, which is {tuple(value.shape)}")
        return replaced

    return offer


def under(tap: Tapped | None, prefix: str) -> Tapped | None:
    """The tap of a part of the model: its names with `prefix.` before them."""
    if tap is None:
        return None
    return lambda name, value: tap(f"{prefix}.{name}", value)


def offer(tap: Tapped | None, name: str, value: Tensor) -> Tensor:
    """The value at `name`: as it is without a tap, else what the (tapped) tap returns."""
    return value if tap is None else tap(name, value)
