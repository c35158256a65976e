"""JSON files of a checkpoint, read with bounds: the one reader of every JSON file the app reads from a checkpoint
(config.json, decoding.json, results.json, the evidence index, the alarm rule, the domain and language tables,
the head importance, the snapshots' index.json, the config recorded in model.safetensors).

A file is read at most `cap` bytes (a gzip file decompressed in chunks, never past its cap) and nested at most
`max_depth` deep, counted before parsing, so a 100,000-deep file is refused in words instead of exhausting the
parser. Every problem is a CheckpointFileError: one line that names the file and what is wrong with it.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

import numpy as np

MAX_DEPTH = 16  # nesting of arrays and objects; the deepest shipped file (head importance) nests 6
CHUNK_BYTES = 1 << 20  # a gzip file is decompressed this much at a time
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # a JSON string, escapes included
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_OPENING = np.frombuffer(b"[{", np.uint8)


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


def write_json_gz(path: str | Path, content) -> Path:
    """`content` as compact UTF-8 JSON, gzipped with no timestamp (the same bytes for the same content)."""
    path = Path(path)
    path.write_bytes(gzip.compress(json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode(), mtime=0))
    return path
