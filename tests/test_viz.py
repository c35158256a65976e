"""viz.py on synthetic attention maps."""

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


def test_attention_figure_has_token_labels_hover_pairs_and_a_scale():
    matrix = random_maps(1, 1, len(TARGET), len(SOURCE))[0, 0]
    fig = viz.attention_figure(matrix, SOURCE, TARGET, "Cross-attention")
    heatmap = fig.data[0]
    np.testing.assert_array_equal(np.asarray(heatmap.z), matrix)
    escaped = [t.replace("<", "&lt;").replace(">", "&gt;") for t in SOURCE]  # plotly reads labels as HTML
    assert list(fig.layout.xaxis.ticktext) == escaped and fig.layout.xaxis.ticktext[-1] == "&lt;/s&gt;"
    assert list(fig.layout.yaxis.ticktext)[:-1] == TARGET[:-1]
    assert heatmap.showscale and heatmap.zmin == 0 and heatmap.zmax == 1
    assert list(heatmap.customdata[2][3]) == ["▁rides", "▁Fahr"]  # row 2 attends to column 3
    assert "%{z:.4f}" in heatmap.hovertemplate and fig.layout.title.text == "Cross-attention"
    with pytest.raises(ValueError, match="does not fit"):
        viz.attention_figure(matrix, SOURCE[:-1], TARGET, "x")


def test_repeated_tokens_keep_their_own_rows():
    tokens = ["a", "▁dog", "▁and", "▁a", "▁cat"]
    fig = viz.attention_figure(np.eye(5, dtype=np.float32), tokens, tokens, "t")
    assert len(fig.data[0].y) == 5  # positions on the axes: the two "a" rows stay apart


def test_overview_has_every_layer_and_head_plus_the_mean():
    maps = random_maps(3, 4, len(TARGET), len(SOURCE))
    fig = viz.overview_figure(maps, SOURCE, TARGET, "all")
    assert len(fig.data) == 3 * (4 + 1)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:5] == ["L1 H1", "L1 H2", "L1 H3", "L1 H4", "L1 mean"] and titles[-1] == "L3 mean"
    np.testing.assert_allclose(np.asarray(fig.data[9].z), maps[1].mean(axis=0), rtol=1e-6)  # L2 mean
    assert sum(bool(trace.showscale) for trace in fig.data) == 1


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
    fig = viz.alignment_figure(alignment, "alignment")
    assert list(fig.data[1].x) == [0, 1, 2, 0, 3, 4]  # the marked strongest source word of each row


def test_png_export(tmp_path):
    matrix = random_maps(1, 1, len(TARGET), len(SOURCE))[0, 0]
    path = viz.save_png(matrix, SOURCE, TARGET, "Cross-attention", tmp_path / "map.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
