"""Attention sharpness: entropy of attention rows in bits, checked against a direct sum, and its bounds."""

import math

import numpy as np
import pytest

from lens.time_travel import LRU, cross_sharpness, row_entropy, uniform_entropy


def test_row_entropy_equals_the_direct_sum_and_its_bounds():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 5, 7))
    maps = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    expected = np.array([[[-sum(p * math.log2(p) for p in row) for row in head] for head in layer] for layer in maps])
    np.testing.assert_allclose(row_entropy(maps), expected, rtol=1e-12)
    even, one_hot = np.full((4, 7), 1 / 7), np.eye(4, 7)
    np.testing.assert_allclose(row_entropy(even), np.full(4, uniform_entropy(7)))
    np.testing.assert_allclose(row_entropy(one_hot), np.zeros(4))  # 0 log 0 counts as 0, not nan
    assert np.all(row_entropy(maps) < uniform_entropy(7))


def test_cross_sharpness_is_the_mean_over_heads_and_rows_per_layer():
    cross = np.stack([np.full((2, 3, 4), 0.25), np.tile(np.eye(4)[:3], (2, 1, 1))])  # (L=2, H=2, T=3, S=4)
    np.testing.assert_allclose(cross_sharpness(cross), [2.0, 0.0])
    with pytest.raises(ValueError, match="layers, heads, rows, cols"):
        cross_sharpness(cross[0])


def test_lru_keeps_the_most_recently_used_and_makes_each_item_once():
    made = []
    cache = LRU(2)
    get = lambda k: cache.get(k, lambda: made.append(k) or k.upper())  # noqa: E731
    assert [get("a"), get("b"), get("a"), get("c"), get("a"), get("b")] == ["A", "B", "A", "C", "A", "B"]
    assert made == ["a", "b", "c", "b"]  # "b" was the least recently used when "c" came in
    assert len(cache) == 2 and (cache.hits, cache.misses) == (2, 4)
    with pytest.raises(ValueError, match="at least 1"):
        LRU(0)
