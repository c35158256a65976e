"""The decoder one token at a time, for generation: the key/value cache and two step decoders.

A step decoder turns the tokens so far into the next token's logits. `CachedDecoder` runs
`Transformer.decode_step` on the newest token only: decoder self-attention keys/values of
earlier steps come from a KVCache that grows with the output, the encoder memory's keys/values
are projected once per sentence, and the matrices come laid out for steps (model/step_linear.py,
fp32 or int8) from `Transformer.step_weights`, built once per set of weights.
`UncachedDecoder` re-runs the full decoder over the prefix: the reference that the tests and
bench/decode.py hold the cached one to (same tokens, same maps).

Shape legend: B sentences, K beams per sentence, N = B * K rows, S source length, t tokens so
far, D model width, H heads, d_k head width, V vocabulary.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor, nn

from .heads import HeadMask
from .step_linear import StepLinear, single_threaded_blas  # noqa: F401  (StepLinear: its home before step_linear.py)


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


@dataclass
class KVCache:
    """Keys and values of one decoder self-attention layer, for up to `capacity` positions.

    Each step appends the new token's key and value and attends to all the steps so far,
    instead of recomputing them from the whole prefix. The buffers start at GROW_STEPS
    positions and grow by as many when full: most outputs end long before max_new_tokens,
    and reserving it for every beam of every sentence cost more memory than the model
    (256 rows of beams: 1.6 MB a position, 140 MB at the 90 positions a batch allowed).
    """

    key: Tensor  # (N, H, allocated, d_k)
    value: Tensor  # (N, H, allocated, d_k)
    capacity: int = 0  # the most positions it will ever hold
    length: int = 0

    GROW_STEPS = 16

    def __post_init__(self):
        self.capacity = self.capacity or self.key.size(2)  # built from full buffers: they are the limit

    @classmethod
    def empty(cls, rows: int, n_heads: int, capacity: int, d_k: int, like: Tensor) -> "KVCache":
        allocated = min(capacity, cls.GROW_STEPS)
        key = like.new_empty(rows, n_heads, allocated, d_k)
        return cls(key=key, value=like.new_empty(rows, n_heads, allocated, d_k), capacity=capacity)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write k, v (N, H, n, d_k) after the cached steps; return all keys and values so far."""
        end = self.length + k.size(2)
        if end > self.capacity:
            raise RuntimeError(f"KVCache is full: capacity {self.capacity}, asked for {end} positions")
        if end > self.key.size(2):
            self._grow(min(self.capacity, max(end, self.key.size(2) + self.GROW_STEPS)))
        self.key[:, :, self.length : end] = k
        self.value[:, :, self.length : end] = v
        self.length = end
        return self.key[:, :, :end], self.value[:, :, :end]  # (N, H, end, d_k)

    def _grow(self, allocated: int) -> None:
        """Room for `allocated` positions; the cached steps move over."""
        for name in ("key", "value"):
            old = getattr(self, name)
            new = old.new_empty(old.size(0), old.size(1), allocated, old.size(3))  # (N, H, allocated, d_k)
            new[:, :, : self.length] = old[:, :, : self.length]
            setattr(self, name, new)

    def reorder(self, index: Tensor, moved: Tensor | None = None) -> None:
        """Keep rows `index` (beam search picks its survivors); only the used steps move. `moved`
        (moved_rows(index)), where as many rows stay: only those rows are written, in place."""
        if moved is not None:
            if moved.numel():
                for buffer in (self.key[:, :, : self.length], self.value[:, :, : self.length]):
                    buffer.index_copy_(0, moved, buffer.index_select(0, index.index_select(0, moved)))
            return
        self.key = _reorder_prefix(self.key, index, self.length)
        self.value = _reorder_prefix(self.value, index, self.length)


def moved_rows(index: Tensor, rows: int) -> Tensor | None:
    """The rows that take another row's place when `rows` rows become rows `index` of themselves; None where the
    number of rows changes. A beam step moves about 45 % of its rows (val, beam 4): writing only those, in place,
    moved a 256-row cache 2.4x faster than copying every row out and back."""
    if index.numel() != rows:
        return None
    return (index != torch.arange(rows, device=index.device)).nonzero().squeeze(1)


def _reorder_prefix(buffer: Tensor, index: Tensor, n: int) -> Tensor:
    """A new buffer of rows `index` of buffer with its first n steps copied; the rest stays uninitialised scratch."""
    out = buffer.new_empty(index.numel(), *buffer.shape[1:])
    out[:, :, :n] = buffer[:, :, :n].index_select(0, index)
    return out


class CachedDecoder:
    """Next-token logits from the newest token, remembering what earlier steps computed."""

    def __init__(self, model: nn.Module, memory: Tensor, src_mask: Tensor, num_beams: int, capacity: int,
                 head_mask: HeadMask | None = None, precision: str = "fp32"):
        """memory (B, S, D), src_mask (B, 1, 1, S) bool: one entry per sentence, not per beam.

        `precision` "int8" multiplies by int8 weights (model/step_linear.py); "fp32" is exact.
        """
        c = model.config
        self.model = model
        self.head_mask = head_mask
        rows = memory.size(0) * num_beams
        self.self_caches = [KVCache.empty(rows, c.n_heads, capacity, c.d_k, like=memory) for _ in range(c.n_decoder_layers)]
        self.memory_kv = model.memory_kv(memory)  # per layer, (B, H, S, d_k) each
        self.step_weights = model.step_weights(precision)
        single_threaded_blas()
        self.src_mask = src_mask
        # The fused kernel takes padding fastest as an additive mask, built once: 0 on real source
        # tokens, -inf on padding. The weights path keeps the boolean one.
        self.src_bias = torch.zeros(src_mask.shape, dtype=memory.dtype, device=memory.device)
        self.src_bias.masked_fill_(~src_mask, float("-inf"))  # (B, 1, 1, S)

    def shortlist(self, candidates: Tensor) -> None:
        """From now on the output layer multiplies only the rows `candidates` (model/shortlist.py)."""
        from .shortlist import ShortlistedOutput

        head = self.model.lm_head
        output = ShortlistedOutput(head.weight.detach(), head.bias, candidates, head.weight.size(0))
        self.step_weights = dataclasses.replace(self.step_weights, lm_head=output)

    def __call__(self, tokens: Tensor, need_weights: bool = False) -> tuple[Tensor, StepAttention | None]:
        logits, self_rows, cross_rows = self.model.decode_step(
            tokens[:, -1:], tokens.size(1) - 1, self.self_caches, self.memory_kv, self.step_weights,
            self.src_mask if need_weights else self.src_bias, need_weights, self.head_mask,
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

    def __init__(self, model: nn.Module, memory: Tensor, src_mask: Tensor, num_beams: int, capacity: int,
                 head_mask: HeadMask | None = None, precision: str = "fp32"):
        """`precision` is taken for a common signature; the reference always runs the fp32 modules."""
        self.model = model
        self.head_mask = head_mask
        self.memory = memory.repeat_interleave(num_beams, dim=0)  # (N, S, D): rows b*K .. b*K+K-1
        self.src_mask = src_mask.repeat_interleave(num_beams, dim=0)  # (N, 1, 1, S)

    def __call__(self, tokens: Tensor, need_weights: bool = False) -> tuple[Tensor, StepAttention | None]:
        hidden, self_maps, cross_maps = self.model.decode(tokens, self.memory, self.src_mask, need_weights=need_weights,
                                                          head_mask=self.head_mask)  # (N, t, D)
        logits = self.model.lm_head(hidden[:, -1])  # (N, V)
        if not need_weights:
            return logits, None
        return logits, StepAttention(decoder=[w[:, :, -1] for w in self_maps], cross=[w[:, :, -1] for w in cross_maps])

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        if sentences is not None:
            self.memory = self.memory[rows]
            self.src_mask = self.src_mask[rows]
