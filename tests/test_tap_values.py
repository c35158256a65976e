"""The tensors of named taps for one sentence (lens/tap_values.py, the /taps endpoint): each equals the model's own
tap on the teacher-forced pass, the output layer comes as its likeliest pieces, and bad names, too many names or
too many numbers are refused by name."""

from pathlib import Path

import pytest
import torch

from lens.explain import DecodingOptions, decode_one
from lens.stream import read
from lens.tap_values import MOST_NAMES, TOP, tap_values
from translation import Translator

CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "de-en"
pytestmark = pytest.mark.skipif(not (CHECKPOINT / "model.safetensors").is_file(), reason="no shipped checkpoint")


@pytest.fixture(scope="module")
def translator():
    return Translator.from_pretrained(CHECKPOINT, device="cpu")


@pytest.mark.parametrize("text", ["Ein Hund.", "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau."])
def test_each_tap_is_the_models_own(translator, text):
    names = [
        "encoder.0.self_attn.q",
        "decoder.2.self_attn.scores",
        "decoder.1.cross_attn.weights",
        "decoder.0.ff.hidden",
    ]
    answer = tap_values(translator, text, names + ["logits"])
    decoded = decode_one(translator, text)
    assert answer["source_ids"] == decoded.source_ids and answer["input_ids"] == decoded.input_ids
    src, tgt = torch.tensor([decoded.source_ids]), torch.tensor([decoded.input_ids])
    with torch.no_grad():
        seen, logits = read(translator.model, src, tgt, names, need_weights=True)
    for name in names:
        got = answer["taps"][name]
        assert got["shape"] == list(seen[name].shape), name
        torch.testing.assert_close(torch.tensor(got["data"]).view(got["shape"]), seen[name].float(), atol=1e-5, rtol=0)
    top = answer["taps"]["logits"]
    assert top["shape"] == [1, len(decoded.input_ids), translator.config.vocab_size]
    assert len(top["top_ids"]) == len(decoded.input_ids) and len(top["top_ids"][0]) == TOP
    assert [row[0] for row in top["top_ids"]] == logits[0].argmax(-1).tolist()
    assert top["top_values"][0][0] == pytest.approx(float(logits[0, 0].max()), abs=1e-5)


@pytest.mark.parametrize(
    "names, message",
    [
        (["encoder.9.self_attn.q"], "'encoder.9.self_attn.q' is not a tap of this model"),
        ([], "names must be a list of tap names"),
        (["encoder.0.ff.out"] * (MOST_NAMES + 1), f"at most {MOST_NAMES} tap names"),
        ("encoder.0.ff.out, nonsense", "'nonsense' is not a tap"),
    ],
)
def test_bad_names_are_refused_by_name(translator, names, message):
    with pytest.raises(ValueError, match=message):
        tap_values(translator, "Ein Hund.", names)


def test_the_endpoint_answers_with_the_sentences_model(translator):
    from ui import api
    from ui.pair import Pair

    pair = Pair.single(translator)
    table = {e.name: e for e in api.endpoint_table(pair, api.model_calls(pair))}
    answer = table["taps"].handler(
        "Ich möchte ein Bier.", '["encoder.1.ff.out", "logits"]', DecodingOptions(max_new_tokens=32)
    )
    assert answer["model"] == "default" and set(answer["taps"]) == {"encoder.1.ff.out", "logits"}
    with pytest.raises(ValueError, match="is not a tap"):
        table["taps"].handler("Ein Hund.", "encoder.0.nothing", DecodingOptions())
