"""The decoder's key/value cache: the keys and values of the tokens decoded so far, one layer's worth.

Shape legend: N decoder rows (B sentences x K beams), H heads, t tokens so far, d_k head width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


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
    def empty(cls, rows: int, n_heads: int, capacity: int, d_k: int, like: Tensor) -> KVCache:
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
