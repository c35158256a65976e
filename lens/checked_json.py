"""JSON files beside the weights, read with bounds and checked entry by entry.

A checkpoint's optional files (the evidence index, the alarm rule, the head importance) are read
at most `cap` bytes (a gzip file decompressed in chunks, never past its cap) and nested at most
MAX_DEPTH deep, counted before parsing, so a 100,000-deep file is refused in words instead of
exhausting the parser. Every problem is one line that names the file and what is wrong with it;
`optional` turns a refused file's feature off with that line as a warning.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

MAX_DEPTH = 16  # nesting of arrays and objects; the deepest shipped file (head importance) nests 6
CHUNK_BYTES = 1 << 20  # a gzip file is decompressed this much at a time
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # a JSON string, escapes included
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_OPENING = np.frombuffer(b"[{", np.uint8)
_KINDS = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
          bool: "true or false", type(None): "null"}
T = TypeVar("T")
log = logging.getLogger("attention_lens")


class CheckpointFileError(ValueError):
    """A checkpoint file that is refused; the message names the file and what is wrong."""


def read_bytes(path: str | Path, cap: int, gzipped: bool = False) -> bytes:
    """The bytes of `path` (decompressed when `gzipped`), refused once they pass `cap`: never more is read."""
    chunks, size = [], 0
    try:
        with (gzip.open if gzipped else open)(path, "rb") as file:
            while chunk := file.read(min(CHUNK_BYTES, cap + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    grows = "decompresses to" if gzipped else "holds"
                    raise CheckpointFileError(f"{path} {grows} more than {cap:,} bytes, the most this file may hold")
    except (OSError, EOFError, zlib.error) as err:
        raise CheckpointFileError(f"cannot read {path}: {err}") from None
    return b"".join(chunks)


def nesting_depth(raw: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest, without parsing it (strings left out)."""
    brackets = np.frombuffer(_NOT_BRACKET.sub(b"", _STRING.sub(b"", raw)), np.uint8)
    if not len(brackets):
        return 0
    return int(np.cumsum(np.where(np.isin(brackets, _OPENING), 1, -1)).max())


def parse(raw: bytes, path: str | Path, max_depth: int = MAX_DEPTH):
    """JSON from UTF-8 bytes, refused in words when it nests deeper than `max_depth` or is not JSON."""
    depth = nesting_depth(raw)
    if depth > max_depth:
        raise CheckpointFileError(f"{path} nests {depth:,} levels deep; this file nests at most {max_depth}")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise CheckpointFileError(f"{path} is not UTF-8 text (byte {err.start})") from None
    except (ValueError, RecursionError) as err:
        raise CheckpointFileError(f"{path} is not valid JSON: {err}") from None


def read_json(path: str | Path, cap: int, max_depth: int = MAX_DEPTH, gzipped: bool = False):
    """The JSON value in `path`, read at most `cap` bytes and nested at most `max_depth` deep."""
    return parse(read_bytes(path, cap, gzipped), path, max_depth)


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
