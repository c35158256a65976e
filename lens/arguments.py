"""Whole-number arguments (a layer, a head, a row, a step) checked by name: NaN, ±inf, 1.5, True and "2" are
refused in words, never met as an OverflowError deep inside."""

from __future__ import annotations

import math


def is_whole(value) -> bool:
    """True for an int, or a float with a whole finite value (JSON may send 2.0); never for a bool."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or (math.isfinite(value) and value == int(value))


def checked_whole(value, name: str, low: int, high: int, note: str = "") -> int:
    """`value` as an int from `low` to `high`, or a ValueError naming `name` and the range."""
    if not is_whole(value) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}{note}, got {value!r}")
    return int(value)
