"""Attention sharpness: how spread out each attention row is, as a number (entropy in bits).

A row that puts all its weight on one column has entropy 0; a row spread evenly over C columns
has log2(C). 2 ** entropy reads as "the number of columns the row effectively looks at".
Shapes: L layers, H heads, R rows (the tokens that attend), C columns (the tokens attended to).
"""

from __future__ import annotations

import numpy as np


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
