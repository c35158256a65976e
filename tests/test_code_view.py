"""The Code view's numbers (lens/code.py): for sentences of three lengths, each tapped line's shape is the shape
the model's own tap sees, its peek is that tensor's numbers, and every line shown is the line that offers it."""

from pathlib import Path

import pytest
import torch

from lens.code import FILES, code_view
from lens.explain import decode_one
from translation import Translator

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "de-en"
SENTENCES = ["Ein Hund.", "Ich möchte ein Bier.", "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau."]

pytestmark = pytest.mark.skipif(not (CHECKPOINT / "model.safetensors").is_file(), reason="no shipped checkpoint")


@pytest.fixture(scope="module")
def translator():
    return Translator.from_pretrained(CHECKPOINT, device="cpu")


@pytest.mark.parametrize("text", SENTENCES)
def test_each_line_shows_the_shape_and_numbers_the_models_tap_sees(translator, text):
    c = translator.config
    view = code_view(translator, text, layer=2)
    decoded = decode_one(translator, text)
    S, T, H, d_k = len(decoded.source_ids), len(decoded.input_ids), c.n_heads, c.d_model // c.n_heads
    shapes = {t["name"]: t["shape"] for t in view["taps"]}
    assert shapes["encoder.embed"] == [1, S, c.d_model]  # the question "what shape after the positional encoding?"
    assert shapes["encoder.1.self_attn.q"] == [1, H, S, d_k] and shapes["decoder.1.self_attn.q"] == [1, H, T, d_k]
    assert shapes["decoder.1.cross_attn.k"] == [1, H, S, d_k] and shapes["decoder.1.cross_attn.scores"] == [1, H, T, S]
    assert shapes["encoder.1.ff.hidden"] == [1, S, c.d_ff] and shapes["logits"] == [1, T, c.vocab_size]
    seen = {}

    def tap(name, value):
        seen[name] = value.clone()

    with torch.inference_mode():
        translator.model(
            torch.tensor([decoded.source_ids]), torch.tensor([decoded.input_ids]), return_attention=True, tap=tap
        )
    for t in view["taps"]:
        value = seen[t["name"]].float().flatten()
        assert t["shape"] == list(seen[t["name"]].shape), t["name"]
        assert t["first"] == pytest.approx(value[:6].tolist(), abs=1e-3), t["name"]
        finite = value[torch.isfinite(value)]
        assert (
            t["mean"] == pytest.approx(float(finite.mean()), abs=1e-3) and t["masked"] == value.numel() - finite.numel()
        )
    assert (
        any(t["masked"] > 0 for t in view["taps"] if t["name"] == "decoder.1.self_attn.scores") is False
    )  # before the mask


def test_every_line_is_in_a_file_shown_and_names_its_tap(translator):
    view = code_view(translator, SENTENCES[1], layer=1)
    assert set(view["files"]) == set(FILES) and view["layer"] == 1 and view["layers"] == 3
    for t in view["taps"]:
        line = view["files"][t["file"]].splitlines()[t["line"] - 1]
        assert f'"{t["tap"].rsplit(".", 1)[-1]}"' in line, t
    assert {t["tap"] for t in view["taps"]} >= {"encoder.embed", "encoder.{i}.self_attn.q", "decoder.{i}.ff.resid"}


@pytest.mark.parametrize("layer", [0, 4, 1.5, "2", None])
def test_a_layer_the_model_lacks_is_refused_by_name(translator, layer):
    with pytest.raises(ValueError, match="layer must be a whole number from 1 to 3"):
        code_view(translator, SENTENCES[0], layer=layer)


def test_the_code_endpoint_answers_with_the_sentences_model_and_refuses_two_sentences(translator):
    from lens.explain import DecodingOptions
    from ui import api
    from ui.locales import Refused
    from ui.pair import Pair

    pair = Pair.single(translator)
    table = {e.name: e for e in api.endpoint_table(pair, api.model_calls(pair))}
    answer = table["code"].handler("Ich möchte ein Bier.", 2, DecodingOptions(max_new_tokens=32))
    assert answer["model"] == "default" and answer["layer"] == 2
    assert any(t["name"] == "decoder.1.ff.out" for t in answer["taps"])
    with pytest.raises(Refused, match="takes one sentence; this text has 2"):
        table["code"].handler("Ein Hund. Eine Katze.", 1, DecodingOptions())
