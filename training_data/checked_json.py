"""JSON files beside the weights, checked entry by entry.

A checkpoint's optional files (the evidence index, the alarm rule, the head importance, the domain and language
tables) are read by model/checkpoint/json_file.py (bounded in bytes and nesting); here their entries are checked,
every problem one line that names the file and what is wrong with it; `optional` turns a refused file's feature off
with that line as a warning.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from model.checkpoint.json_file import (  # noqa: F401 - the reader, used through this module by lens/
    MAX_DEPTH,
    CheckpointFileError,
    nesting_depth,
    parse,
    read_bytes,
    read_json,
)

_KINDS = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}
T = TypeVar("T")
log = logging.getLogger("attention_lens")


def shown(value) -> str:
    """A value as a message quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def kind(value) -> str:
    """What a JSON value is, in words: "a list", "an object", "a number"..."""
    return _KINDS.get(type(value), f"a {type(value).__name__}")


def refused(path: str | Path, where: str, value, wanted: str) -> CheckpointFileError:
    """The error for one bad entry: "<file>: <where> is <value>, not <wanted>"."""
    return CheckpointFileError(f"{path}: {where} is {shown(value)}, not {wanted}")


def is_whole(value, low: int = 0, high: int | None = None) -> bool:
    """A whole number (bool excluded) from `low` to `high`."""
    return type(value) is int and value >= low and (high is None or value <= high)


def is_finite(value, low: float = -math.inf, high: float = math.inf) -> bool:
    """A finite number (bool excluded) from `low` to `high`."""
    return type(value) in (int, float) and math.isfinite(value) and low <= value <= high


def checked_object(value, path: str | Path, where: str, required=(), allowed=None) -> dict:
    """`value` as an object holding every key of `required` and, when `allowed` is given, no other."""
    if not isinstance(value, dict):
        raise CheckpointFileError(f"{path}: {where} is {kind(value)}, not an object")
    missing = [key for key in required if key not in value]
    if missing:
        raise CheckpointFileError(f"{path}: {where} lacks {', '.join(map(repr, missing))}")
    unknown = [key for key in value if allowed is not None and key not in allowed]
    if unknown:
        raise CheckpointFileError(f"{path}: {where} holds unknown field(s) {', '.join(map(shown, unknown[:5]))}")
    return value


def optional(load: Callable[[], T], feature_off: str) -> T | None:
    """What `load` reads, or None with a one-line warning when it refuses its file: why, and `feature_off`
    (what the page goes without, e.g. "the head-importance figures are off")."""
    try:
        return load()
    except CheckpointFileError as err:
        log.warning("%s; %s", err, feature_off)
        return None


MAX_COUNT = 10**12


def checked_two_way_counts(content: dict, path: str | Path) -> dict:
    """The naive-Bayes part of a two-way table (training_data/domain.py, training_data/language.py): `smoothing` and `threshold` in
    range, and `counts`, each key's two whole counts, not both 0; refused naming the file and the entry."""
    if not is_finite(content["smoothing"], 1e-6, 100):
        raise refused(path, "smoothing", content["smoothing"], "a number from 1e-6 to 100")
    if not is_finite(content["threshold"], -1000, 1000):
        raise refused(path, "threshold", content["threshold"], "a number from -1000 to 1000")
    counts = checked_object(content["counts"], path, "counts")
    if not counts:
        raise CheckpointFileError(f"{path}: counts is empty")
    for key, pair in counts.items():
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(is_whole(n, 0, MAX_COUNT) for n in pair) and sum(pair) > 0
        ):
            raise refused(path, f"counts[{key!r}]", pair, "two whole counts, not both 0")
    return content
