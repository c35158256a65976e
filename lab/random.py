"""The lab's random numbers: mulberry32, the generator the page uses (ui/static/trainer.js `generator`), so that
the page and PyTorch start from the same weights and draw the same batches. 32-bit arithmetic as JavaScript does it."""

from __future__ import annotations

import math

MASK = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    return (a * b) & MASK


class Mulberry32:
    """Numbers in [0, 1) from a 32-bit seed; `normal()` is the Box-Muller draw of the page's `normal`."""

    def __init__(self, seed: int) -> None:
        self.a = seed & MASK

    def __call__(self) -> float:
        self.a = (self.a + 0x6D2B79F5) & MASK
        t = _imul(self.a ^ (self.a >> 15), 1 | self.a)
        t = ((t + _imul(t ^ (t >> 7), 61 | t)) & MASK) ^ t
        return ((t ^ (t >> 14)) & MASK) / 4294967296

    def normal(self) -> float:
        radius = math.sqrt(-2 * math.log(1 - self()))
        return radius * math.cos(2 * math.pi * self())
