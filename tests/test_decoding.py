"""Forced prefixes and target probabilities: decoding constrained, then free; errors that say why."""

import pytest
import torch

from generation import generate
from lens.maps import explain
from tests.test_model import batch_of_sources, random_ids, tiny_model

PAD = 0


def strip(row: list[int]) -> list[int]:
    return [t for t in row if t != PAD]


def test_own_prefix_reproduces_free_decoding():
    # Greedy decoding exactly; a beam search given a prefix spends all its beams on continuations
    # of it, so it may find a different ending than the free search (README: forced prefix).
    model = tiny_model(seed=21)
    for row in range(4):
        src = batch_of_sources()[row : row + 1]
        free = strip(generate(model, src, max_new_tokens=12)[0].tolist())
        for t in range(len(free)):
            forced = generate(model, src, max_new_tokens=12, prefix=free[:t])
            assert strip(forced[0].tolist()) == free, (row, t)


@pytest.mark.parametrize("num_beams", [1, 3])
def test_prefix_is_followed_then_decoding_is_free_cached_as_uncached(num_beams):
    model = tiny_model(seed=22)
    src = batch_of_sources()
    prefix = [7, 8, 9]
    cached = generate(model, src, max_new_tokens=10, num_beams=num_beams, prefix=prefix)
    uncached = generate(model, src, max_new_tokens=10, num_beams=num_beams, prefix=prefix, use_cache=False)
    assert cached.tolist() == uncached.tolist()
    assert all(row[:3] == prefix for row in cached.tolist())
    free = generate(model, src, max_new_tokens=10, num_beams=num_beams)
    assert free[:, :3].tolist() != [prefix] * 4  # the prefix was not what the model would say anyway


def test_impossible_prefixes_get_clear_errors():
    model = tiny_model()
    src = random_ids(1, 5, 1)
    with pytest.raises(ValueError, match="longer than the 4 new tokens"):
        generate(model, src, max_new_tokens=4, prefix=[5] * 5)
    with pytest.raises(ValueError, match="not ordinary tokens"):
        generate(model, src, max_new_tokens=4, prefix=[5, model.config.eos_id])
    with pytest.raises(ValueError, match="not ordinary tokens"):
        generate(model, src, max_new_tokens=4, prefix=[500])


def test_translator_prefix_text_and_ids(tiny_checkpoint):
    from translation import Translator

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    text = "Zwei Hunde spielen im Schnee."
    ids = translator.encode_prefix("Two dogs")
    assert ids and translator.tokenizer.decode(ids) == "Two dogs"
    out = explain(translator, text, num_beams=2, max_new_tokens=10, prefix="Two dogs")
    assert out.translation.startswith("Two dogs")
    assert translator.translate(text, num_beams=2, max_new_tokens=10, prefix=ids) == out.translation
    src_ids, _ = translator.encode_source(text)
    free = strip(translator.generate_ids([src_ids], 1, 1.0, 10)[0])
    assert translator.translate(text, num_beams=1, max_new_tokens=10, prefix=free[:3]) == translator.decode(free)
    assert translator.translate(text, prefix="") == translator.translate(text)  # empty: no constraint


def test_translator_prefix_errors(tiny_checkpoint):
    from translation import Translator

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    with pytest.raises(ValueError, match="longer than the model's max_len"):
        translator.translate("Ein Hund.", prefix="dog " * 80)
    with pytest.raises(ValueError, match="longer than the 3 new tokens"):
        translator.translate("Ein Hund.", max_new_tokens=3, prefix="a big brown dog runs")
    with pytest.raises(TypeError, match="prefix must be English text or a list of token ids"):
        translator.translate("Ein Hund.", prefix=3.5)

    class UnknownOnly:  # a tokenizer that cannot encode the prefix's characters
        def encode(self, text, add_special_tokens=False):
            return type("Encoding", (), {"ids": [5, 3]})()

    translator.tokenizer = UnknownOnly()
    with pytest.raises(ValueError, match="cannot encode"):
        translator.encode_prefix("☃")


def test_target_probs_are_the_teacher_forced_probabilities(tiny_checkpoint):
    from translation import Translator

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    text = "Ein Mann fährt Fahrrad."
    result = explain(translator, text, num_beams=2, max_new_tokens=10)
    T = len(result.target_tokens)
    assert result.target_probs.shape == (T,) and result.target_probs.dtype == "float32"
    assert ((result.target_probs >= 0) & (result.target_probs <= 1)).all()
    # A separate teacher-forced pass over the same output.
    src_ids, _ = translator.encode_source(text)
    out_ids = [translator.tokenizer.token_to_id(t.replace("▁", "Ġ")) for t in result.target_tokens]
    tgt_in = torch.tensor([[translator.config.bos_id] + out_ids[:-1]])
    with torch.no_grad():
        log_probs = translator.model(torch.tensor([src_ids]), tgt_in).log_softmax(-1)[0]
    expected = log_probs[torch.arange(T), torch.tensor(out_ids)].exp().numpy()
    assert abs(result.target_probs - expected).max() < 1e-5
    assert result.to_dict()["target_probs"] == [round(float(p), 5) for p in result.target_probs]
