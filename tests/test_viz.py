"""viz.py on synthetic attention maps: selection, word alignment, the bytes the page draws."""

from types import SimpleNamespace

import numpy as np
import pytest

import viz

SOURCE = ["Ein", "▁Mann", "▁fährt", "▁Fahr", "rad", ".", "</s>"]
TARGET = ["A", "▁man", "▁rides", "▁a", "▁bi", "cycle", ".", "</s>"]
DECODER_INPUT = ["<s>"] + TARGET[:-1]


def random_maps(layers, heads, rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(cols), size=(layers, heads, rows)).astype(np.float32)


def test_select_map_picks_a_head_or_the_mean_over_heads():
    maps = random_maps(3, 4, 8, 7)
    np.testing.assert_array_equal(viz.select_map(maps, 1, 2), maps[1, 2])
    mean = viz.select_map(maps, 2, None)
    np.testing.assert_allclose(mean, (maps[2, 0] + maps[2, 1] + maps[2, 2] + maps[2, 3]) / 4, rtol=1e-6)
    np.testing.assert_allclose(mean.sum(-1), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="layer 3 out of range"):
        viz.select_map(maps, 3, None)
    with pytest.raises(ValueError, match="head 4 out of range"):
        viz.select_map(maps, 0, 4)


def test_axis_labels_follow_the_kind_of_attention():
    assert viz.axis_labels("encoder", SOURCE, TARGET, DECODER_INPUT) == (SOURCE, SOURCE)
    assert viz.axis_labels("decoder", SOURCE, TARGET, DECODER_INPUT) == (DECODER_INPUT, TARGET)
    assert viz.axis_labels("cross", SOURCE, TARGET, DECODER_INPUT) == (SOURCE, TARGET)
    with pytest.raises(ValueError, match="unknown attention kind"):
        viz.axis_labels("sideways", SOURCE, TARGET, DECODER_INPUT)


def test_subwords_merge_into_words():
    words = viz.merge_subwords(SOURCE)
    assert words == [("Ein", [0]), ("Mann", [1]), ("fährt", [2]), ("Fahrrad", [3, 4]), (".", [5])]
    assert [w for w, _ in viz.merge_subwords(TARGET)] == ["A", "man", "rides", "a", "bicycle", "."]


def test_word_alignment_sums_source_subwords_and_averages_target_subwords():
    cross = np.zeros((len(TARGET), len(SOURCE)), dtype=np.float32)
    cross[0, 0] = 1.0  # A -> Ein
    cross[1, 1] = 1.0  # man -> Mann
    cross[2, 2] = 1.0  # rides -> fährt
    cross[3, 0] = 1.0  # a -> Ein
    cross[4, 3], cross[4, 4] = 0.5, 0.5  # bi -> Fahr + rad
    cross[5, 4], cross[5, 1] = 0.6, 0.4  # cycle -> rad (+ Mann)
    cross[6, 5] = cross[7, 6] = 1.0
    alignment = viz.word_alignment(cross, SOURCE, TARGET)
    assert alignment.target_words == ["A", "man", "rides", "a", "bicycle", "."]
    links = {en: (de, round(w, 3)) for en, de, w in alignment.links}
    assert links["man"] == ("Mann", 1.0) and links["rides"] == ("fährt", 1.0)
    assert links["bicycle"] == ("Fahrrad", 0.8)  # (1.0 + 0.6) / 2 target subwords
    assert alignment.weights.shape == (6, 5)


def test_quantized_maps_round_trip_within_half_a_step():
    maps = random_maps(2, 3, 5, 7)
    maps[0, 0, 0, 0], maps[1, 2, 4, 6] = 0.0, 1.0
    back = viz.dequantize(viz.quantize(maps), maps.shape)
    assert back.shape == maps.shape and back.dtype == np.float32
    assert np.abs(back - maps).max() <= 0.5 / 255 + 1e-7
    assert back[0, 0, 0, 0] == 0.0 and back[1, 2, 4, 6] == 1.0
    assert viz.quantize(np.full((1, 1, 1, 2), np.nan)) == viz.quantize(np.zeros((1, 1, 1, 2)))  # NaN drawn as 0


def test_sentence_payload_carries_tokens_words_probabilities_and_every_map():
    T, S = len(TARGET), len(SOURCE)
    explanation = SimpleNamespace(
        translation="A man rides a bicycle.", truncated=False, source_tokens=SOURCE, target_tokens=TARGET,
        decoder_input_tokens=DECODER_INPUT, encoder=random_maps(2, 4, S, S), decoder=random_maps(2, 4, T, T, seed=1),
        cross=random_maps(2, 4, T, S, seed=2), target_probs=np.linspace(0.1, 0.9, T, dtype=np.float32))
    words = {"src": viz.merge_subwords(SOURCE), "tgt": viz.merge_subwords(TARGET), "in": []}
    payload = viz.sentence_payload("Ein Mann fährt Fahrrad.", explanation, words, -0.5, True)
    assert payload["tokens"] == {"src": SOURCE, "tgt": TARGET, "in": DECODER_INPUT}
    assert payload["words"]["src"][3] == ["Fahrrad", [3, 4]]
    assert payload["probs"] == [round(float(p), 3) for p in explanation.target_probs]
    assert payload["unfamiliar"] is True and payload["mean_log_prob"] == -0.5
    for kind, shape in (("encoder", (2, 4, S, S)), ("decoder", (2, 4, T, T)), ("cross", (2, 4, T, S))):
        np.testing.assert_allclose(viz.dequantize(payload["maps"][kind], shape), getattr(explanation, kind), atol=0.5 / 255)
