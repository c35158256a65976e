"""ui/payload.py on synthetic attention maps: the bytes the page draws, and one sentence's payload."""

from types import SimpleNamespace

import numpy as np

from lens.explain import word_spans
from ui import payload as viz

SOURCE = ["Ein", "▁Mann", "▁fährt", "▁Fahr", "rad", ".", "</s>"]
TARGET = ["A", "▁man", "▁rides", "▁a", "▁bi", "cycle", ".", "</s>"]
DECODER_INPUT = ["<s>"] + TARGET[:-1]


def random_maps(layers, heads, rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(cols), size=(layers, heads, rows)).astype(np.float32)


def words_of(tokens):
    return [("".join(tokens[i] for i in span).replace("▁", ""), span) for span in word_spans(tokens)]


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
        translation="A man rides a bicycle.",
        truncated=False,
        source_tokens=SOURCE,
        target_tokens=TARGET,
        decoder_input_tokens=DECODER_INPUT,
        encoder=random_maps(2, 4, S, S),
        decoder=random_maps(2, 4, T, T, seed=1),
        cross=random_maps(2, 4, T, S, seed=2),
        target_probs=np.linspace(0.1, 0.9, T, dtype=np.float32),
    )
    words = {"src": words_of(SOURCE), "tgt": words_of(TARGET), "in": []}
    payload = viz.sentence_payload("Ein Mann fährt Fahrrad.", explanation, words, -0.5, True)
    assert payload["tokens"] == {"src": SOURCE, "tgt": TARGET, "in": DECODER_INPUT}
    assert payload["words"]["src"][3] == ["Fahrrad", [3, 4]]
    assert payload["probs"] == [round(float(p), 3) for p in explanation.target_probs]
    assert payload["unfamiliar"] is True and payload["mean_log_prob"] == -0.5
    for kind, shape in (("encoder", (2, 4, S, S)), ("decoder", (2, 4, T, T)), ("cross", (2, 4, T, S))):
        np.testing.assert_allclose(
            viz.dequantize(payload["maps"][kind], shape), getattr(explanation, kind), atol=0.5 / 255
        )
