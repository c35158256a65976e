"""lens/qkv.py: one row of one map opened up, recomputed from the layer's own weights: the weights equal the
map's row for every kind, the arithmetic steps agree with each other, and bad positions are refused by name."""

import math

import numpy as np
import pytest

from lens.explain import DecodingOptions, explain_batch
from lens.qkv import KINDS, qkv

SENTENCE = "Ein Mann fährt Fahrrad."


@pytest.fixture(scope="module")
def translator(both_norms):
    return both_norms


@pytest.mark.parametrize("kind", KINDS)
def test_the_weights_recomputed_from_q_and_k_are_the_maps_row(translator, kind):
    options = DecodingOptions(num_beams=1, max_new_tokens=8)
    e = explain_batch(translator, [SENTENCE], options)[0].explanation
    maps = getattr(e, kind)  # (L, H, rows, cols)
    for layer in range(1, maps.shape[0] + 1):
        for head in (1, maps.shape[1]):
            for row in (1, maps.shape[2]):
                opened = qkv(translator, SENTENCE, kind, layer, head, row, options)
                np.testing.assert_allclose(opened.weights, maps[layer - 1, head - 1, row - 1], atol=1e-5)


def test_each_step_follows_from_the_one_before(translator):
    opened = qkv(translator, SENTENCE, "decoder", 1, 2, 3, DecodingOptions(num_beams=1, max_new_tokens=8))
    q, k, v = np.array(opened.q), np.array(opened.k), np.array(opened.v)
    d_k = translator.config.d_model // translator.config.n_heads
    assert q.shape == (d_k,) and k.shape == v.shape == (len(opened.column_tokens), d_k)
    np.testing.assert_allclose(opened.scores, k @ q, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(opened.scaled, np.array(opened.scores) / math.sqrt(d_k), rtol=1e-6)
    assert opened.mask == [c <= 2 for c in range(len(opened.column_tokens))]  # row 3 sees columns 1-3 only
    w = np.array(opened.weights)
    assert abs(w.sum() - 1) < 1e-5 and (w[3:] == 0).all()
    np.testing.assert_allclose(opened.head_output, w @ v, rtol=1e-5, atol=1e-6)
    assert len(opened.output) == translator.config.d_model


@pytest.mark.parametrize(
    "args, message",
    [
        (("keys", 1, 1, 1), "kind must be one of encoder, decoder, cross"),
        (("cross", 0, 1, 1), "layer must be a whole number from 1 to"),
        (("cross", 1, 99, 1), "head must be a whole number from 1 to"),
        (("encoder", 1, 1, 999), "row must be a whole number from 1 to"),
        (("encoder", 1, 1.5, 1), "head must be a whole number"),
    ],
)
def test_a_position_the_sentence_does_not_have_is_refused_by_name(translator, args, message):
    with pytest.raises(ValueError, match=message):
        qkv(translator, SENTENCE, *args, DecodingOptions(num_beams=1, max_new_tokens=8))
