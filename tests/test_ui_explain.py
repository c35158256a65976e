"""lens/explain.py and training_data/confidence.py on a tiny model: a batch of sentences explained at once
equals each explained alone; words, checked options, caps and confidence."""

import math

import numpy as np
import pytest
import torch

from lens import explain as lx
from lens.maps import explain
from training_data.confidence import looks_unfamiliar, mean_log_prob
from ui.runtime import decoding_options

SENTENCES = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im hohen Gras mit einem orangen Spielzeug.", "Ein Kind."]


@pytest.fixture(scope="module")
def translator(tiny_checkpoint):
    from translation import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


@pytest.mark.parametrize("num_beams", [1, 3])
def test_a_batch_explains_each_sentence_as_if_alone(translator, num_beams):
    options = lx.DecodingOptions(num_beams=num_beams, length_penalty=1.0, max_new_tokens=12)
    batch = lx.explain_batch(translator, SENTENCES, options)
    assert [s.source for s in batch] == SENTENCES
    for sentence, text in zip(batch, SENTENCES):
        alone = explain(translator, text, num_beams=num_beams, max_new_tokens=12)
        got = sentence.explanation
        assert got.translation == alone.translation and got.target_tokens == alone.target_tokens
        assert got.source_tokens == alone.source_tokens and got.decoder_input_tokens == alone.decoder_input_tokens
        for kind in ("encoder", "decoder", "cross"):
            np.testing.assert_allclose(getattr(got, kind), getattr(alone, kind), atol=1e-5)
        np.testing.assert_allclose(got.target_probs, alone.target_probs, atol=1e-5)


def test_target_probs_are_the_softmax_of_each_step(translator):
    result = explain(translator, SENTENCES[0], num_beams=1, max_new_tokens=10)
    ids = [translator.tokenizer.token_to_id(t) for t in result.target_tokens]  # pieces without byte escapes here
    src = torch.tensor([translator.encode_source(SENTENCES[0])[0]])
    with torch.no_grad():
        logits = translator.model(src, torch.tensor([[translator.config.bos_id] + ids[:-1]]))
    expected = torch.softmax(logits[0], -1)[torch.arange(len(ids)), torch.tensor(ids)].numpy()
    np.testing.assert_allclose(result.target_probs, expected, rtol=1e-4)
    assert result.target_probs.dtype == np.float32 and result.to_dict()["target_probs"][0] == round(
        float(expected[0]), 5
    )
    # greedy picks the most likely token at every step, so no step is below 1 / vocabulary
    assert (result.target_probs >= 1 / translator.config.vocab_size).all()


def test_words_merge_pieces_keep_specials_and_join_an_emoji(translator):
    assert lx.word_spans(["Ein", "▁Fahr", "rad", ".", "</s>"]) == [[0], [1, 2], [3], [4]]
    assert lx.word_spans(["<s>", "A", "▁bi", "cycle", "!", "!"]) == [[0], [1], [2, 3], [4], [5]]
    ids, _ = translator.encode_source("Ein 😀 Hund.")
    from tokenizer import token_strings

    words = lx.words_of(translator, ids, token_strings(translator.tokenizer, ids))
    assert [w for w, _ in words] == ["Ein", "😀", "Hund", ".", "</s>"]
    assert sorted(i for _, span in words for i in span) == list(range(len(ids)))


@pytest.mark.parametrize(
    "args, message",
    [
        (("beam search", 4, float("nan"), 20), "length_penalty must be a finite number"),
        (("beam search", 4, math.inf, 20), "length_penalty must be a finite number"),
        (("beam search", 0, 1.0, 20), "num_beams must be between 1 and 8"),
        (("beam search", "many", 1.0, 20), "num_beams must be a finite number"),
        (("beam search", 4, 1.0, 10_000), "max_length must be between 1 and 64"),
        (("beam search", True, 1.0, 20), "num_beams must be a finite number"),
        (("sideways", 4, 1.0, 20), "decoding must be one of beam search, greedy"),
    ],
)
def test_bad_options_are_refused_by_name(args, message):
    with pytest.raises(ValueError, match=message):
        decoding_options(*args, max_len=64)


def test_greedy_means_one_beam():
    assert decoding_options("greedy", 5, 1.0, 20, max_len=64).num_beams == 1
    assert decoding_options("beam search", 5, 1.0, 20, max_len=64).to_dict() == {
        "num_beams": 5,
        "length_penalty": 1.0,
        "max_new_tokens": 20,
    }


def test_texts_are_capped_before_any_work():
    with pytest.raises(ValueError, match="at most 5,000 are translated"):
        lx.sentences_of("Ein Hund. " * 1000)
    sentences, left_out = lx.sentences_of("Ein Hund rennt. " * (lx.MAX_SENTENCES + 3))
    assert len(sentences) == lx.MAX_SENTENCES and left_out == 3


def test_a_paragraph_translates_as_its_sentences_joined(translator):
    options = lx.DecodingOptions(num_beams=2, length_penalty=1.0, max_new_tokens=10)
    text = " ".join(SENTENCES)
    expected = [translator.translate(s, num_beams=2, max_new_tokens=10) for s in SENTENCES]
    assert lx.translate_text(translator, text, options) == " ".join(e for e in expected if e)
    assert lx.explain_text(translator, text, options).translation == " ".join(e for e in expected if e)


def test_confidence_is_the_mean_log_probability():
    assert mean_log_prob(np.array([1.0, 1.0])) == 0.0
    assert mean_log_prob(np.array([0.5, 0.25])) == pytest.approx((math.log(0.5) + math.log(0.25)) / 2)
    assert mean_log_prob(np.array([])) == 0.0 and math.isfinite(mean_log_prob(np.array([0.0])))
    assert looks_unfamiliar(np.array([0.1, 0.2])) and not looks_unfamiliar(np.array([0.9, 0.95]))
