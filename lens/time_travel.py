"""Time travel over a training run: find its snapshots, keep a few loaded (least recently used
first out), and say what one snapshot makes of a text: its explanation and how sharp its
cross-attention is.

Sharpness is how spread out each attention row is, as a number (entropy in bits): a row that puts all its
weight on one column has entropy 0; a row spread evenly over C columns has log2(C), so 2 ** entropy reads as
"the number of columns the row effectively looks at". Shapes: L layers, H heads, R rows (the tokens that
attend), C columns (the tokens attended to).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from translation import Translator
from translation.snapshots import FOLDER, Snapshot, list_snapshots, load_snapshot

from .cost import PAGE
from .explain import DecodingOptions, TextExplanation, explain_text


def row_entropy(maps: np.ndarray) -> np.ndarray:
    """(..., R, C) post-softmax weights -> (..., R) entropy of each row in bits."""
    p = np.asarray(maps, dtype=np.float64)
    p = p / np.clip(p.sum(axis=-1, keepdims=True), 1e-12, None)  # rows of stored maps may be rounded
    # 0 * log 0 is taken as 0: a column with no weight adds nothing to the spread.
    logs = np.log2(np.where(p > 0, p, 1.0))
    return -(p * logs).sum(axis=-1)


def cross_sharpness(cross: np.ndarray) -> np.ndarray:
    """(L, H, T, S) cross-attention -> (L,) mean entropy of its rows per layer, in bits."""
    if np.ndim(cross) != 4:
        raise ValueError(f"cross-attention must have shape (layers, heads, rows, cols), got {np.shape(cross)}")
    return row_entropy(cross).mean(axis=(1, 2))  # (L,)


def uniform_entropy(n_cols: int) -> float:
    """The entropy of a row spread evenly over n_cols columns: the most a row can have."""
    if n_cols < 1:
        raise ValueError(f"n_cols must be at least 1, got {n_cols}")
    return float(np.log2(n_cols))


class LRU:
    """A dict of at most `size` items that drops the least recently used; safe across threads."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError(f"an LRU cache needs room for at least 1 item, got {size}")
        self.size, self.lock = size, threading.Lock()
        self.items: OrderedDict[Hashable, object] = OrderedDict()  # key -> value, the most recently used last
        self.hits = self.misses = 0

    def get(self, key: Hashable, make: Callable[[], object]):
        """The item under `key`, made (outside the lock) and kept if it is not there."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                self.hits += 1
                return self.items[key]
            self.misses += 1
        value = make()  # a slow load must not block readers of other keys
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self.items)


def snapshot_root(source: str | Path) -> str | Path:
    """The checkpoint folder or Hub repo whose snapshots to list: a folder that holds `snapshots/`,
    that `snapshots/` folder itself, or a Hub repo id (anything that is not a local folder)."""
    folder = Path(str(source))
    if not folder.is_dir():
        return str(source)
    if folder.name == FOLDER and not (folder / FOLDER).is_dir():
        return folder.parent
    return folder


def find_snapshots(source: str | Path) -> list[Snapshot]:
    """The snapshots of a run, by step; [] when it has none (or none can be read yet)."""
    root = snapshot_root(source)
    if isinstance(root, Path) and not (root / FOLDER).is_dir():
        return []
    return list_snapshots(root)


@dataclass
class SnapshotReading:
    """What one snapshot makes of a text: its explanation, and per layer the mean entropy (bits)
    of its cross-attention rows beside the entropy of a row spread evenly over the German."""

    snapshot: Snapshot
    explanation: TextExplanation
    sharpness: np.ndarray  # (L,) bits, mean over sentences, heads and rows
    uniform: float  # bits of an even spread, mean over the same rows


class SnapshotLibrary:
    """The snapshots of one run, loaded lazily; at most `max_loaded` translators are kept in memory."""

    def __init__(self, source: str | Path, max_loaded: int = 3, device: str | None = None):
        self.source, self.root, self.device = source, snapshot_root(source), device
        self.loaded = LRU(max_loaded)

    def snapshots(self) -> list[Snapshot]:
        return find_snapshots(self.source)

    def translator(self, snapshot: Snapshot) -> Translator:
        key = snapshot.path or snapshot.revision
        return self.loaded.get(key, lambda: load_snapshot(self.root, snapshot, device=self.device))

    def read(self, snapshot: Snapshot, text: str, options: DecodingOptions) -> SnapshotReading:
        """Explain `text` with one snapshot and measure its cross-attention sharpness."""
        result = explain_text(self.translator(snapshot), text, options, PAGE)
        crosses = [s.explanation.cross for s in result.sentences]  # each (L, H, T, S)
        if not crosses:
            raise ValueError("text must hold at least one German sentence")
        sharpness = np.mean([cross_sharpness(c) for c in crosses], axis=0)  # (L,)
        uniform = float(np.mean([uniform_entropy(c.shape[-1]) for c in crosses]))
        return SnapshotReading(snapshot, result, sharpness, uniform)
