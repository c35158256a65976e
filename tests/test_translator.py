"""Translator: text in, text and maps out, with bad input handled."""

import json
from pathlib import Path

import numpy as np
import pytest

from lens.maps import explain
from tests.corpus import DATA_DIR, needs_corpus
from translation import Translator

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def translator(tiny_checkpoint):
    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


def test_a_list_translates_like_each_sentence_alone_and_keeps_its_order(translator):
    sentences = ["Ein Hund.", "Zwei Männer gehen über eine Straße in der Stadt.", "", "Eine Frau lacht."]
    batch = translator.translate(sentences, num_beams=2, max_new_tokens=12, batch_size=2)
    alone = [translator.translate(s, num_beams=2, max_new_tokens=12) for s in sentences]
    assert batch == alone and batch[2] == ""
    assert translator.translate([]) == []


def test_empty_input_is_an_empty_translation(translator):
    assert translator.translate("") == "" and translator.translate("  \n ") == ""
    result = explain(translator, "   ")
    assert result.translation == "" and result.source_tokens == [] and result.cross.shape[2:] == (0, 0)


def test_overlong_input_is_truncated_with_a_warning(translator):
    text = "Ein Hund läuft über eine Wiese. " * 200
    with pytest.warns(UserWarning, match="longer than 64 tokens"):
        translator.translate(text, num_beams=1, max_new_tokens=8)
    result = explain(translator, text, num_beams=1, max_new_tokens=8)
    assert result.truncated and len(result.source_tokens) == translator.config.max_len
    assert not explain(translator, "Ein Hund.", num_beams=1).truncated


def test_explain_maps_fit_the_tokens_and_the_translation(translator):
    result = explain(translator, "Zwei Hunde spielen im Schnee.", num_beams=3, max_new_tokens=10)
    S, T = len(result.source_tokens), len(result.target_tokens)
    c = translator.config
    assert result.encoder.shape == (c.n_encoder_layers, c.n_heads, S, S)
    assert result.decoder.shape == (c.n_decoder_layers, c.n_heads, T, T)
    assert result.cross.shape == (c.n_decoder_layers, c.n_heads, T, S)
    assert result.decoder_input_tokens[0] == "<s>" and result.decoder_input_tokens[1:] == result.target_tokens[:-1]
    np.testing.assert_allclose(result.cross.sum(-1), 1.0, rtol=1e-5)
    assert result.translation == translator.translate("Zwei Hunde spielen im Schnee.", num_beams=3, max_new_tokens=10)
    exported = result.to_dict()
    assert exported["source_tokens"] == result.source_tokens and len(exported["cross"]) == c.n_decoder_layers


def test_non_text_input_is_a_clear_error(translator):
    with pytest.raises(TypeError, match="expected text"):
        translator.translate(["ok", 5])
    with pytest.raises(TypeError, match="expected text"):
        explain(translator, None)


@needs_corpus
def test_shipped_checkpoint_reproduces_its_committed_test_hypotheses():
    """The shipped weights, loaded through every check, still translate exactly as when they were
    scored: the first test sentences against checkpoints/de-en/test_hypotheses.txt."""
    import data

    folder = ROOT / "checkpoints" / "de-en"
    decoding = json.loads((folder / "results.json").read_text())["results"]["decoding"]
    expected = (folder / "test_hypotheses.txt").read_text(encoding="utf-8").splitlines()[:24]
    test = data.load_split(DATA_DIR, "test_2016_flickr")
    translator = Translator.from_pretrained(folder, device="cpu")
    got = translator.translate(
        test.src[:24], num_beams=decoding["num_beams"], length_penalty=decoding["length_penalty"]
    )
    assert len(expected) == 24 and got == expected


def test_beam_search_on_a_cpu_runs_at_most_96_rows_at_a_time_and_translates_alike(translator):
    sentences = [f"Ein Mann und {n} Hunde laufen." for n in range(1, 31)]
    sizes = []
    original = translator.generate_ids

    def recording(sources, *args, **kwargs):
        sizes.append(len(sources))
        return original(sources, *args, **kwargs)

    translator.generate_ids = recording
    try:
        beams = translator.translate(sentences, num_beams=4, batch_size=64, max_new_tokens=12)
        greedy = translator.translate(sentences, num_beams=1, batch_size=64, max_new_tokens=12)
    finally:
        del translator.generate_ids
    assert sizes == [24, 6, 30]  # beams: 24 sentences x 4 rows; greedy: the whole batch of 30
    assert beams == [translator.translate(s, num_beams=4, max_new_tokens=12) for s in sentences]
    assert greedy == translator.translate(sentences, num_beams=1, batch_size=1, max_new_tokens=12)
    with pytest.raises(ValueError, match="batch_size"):
        translator.translate(sentences, batch_size=0)
