"""The repetition rule: with no_repeat_ngram = n no n pieces in a row are written twice; the rule travels in the
checkpoint's decoding.json, and a bad one is refused naming the file."""

import json

import pytest
import torch

from generation.bans import repeated_ngram_bans


def has_repeated_ngram(ids: list[int], n: int) -> bool:
    grams = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]
    return len(grams) != len(set(grams))


def test_the_bans_are_the_pieces_that_followed_the_last_two_before():
    tokens = torch.tensor([[1, 7, 8, 9, 7, 8]])  # BOS, then 7 8 9 7 8: a 9 now would repeat "7 8 9"
    followers, seen = repeated_ngram_bans(tokens, 3)
    assert followers[seen].tolist() == [9]
    tokens = torch.tensor([[1, 7, 8, 9, 8, 7]])  # "8 7" never came before
    assert not repeated_ngram_bans(tokens, 3)[1].any()


@pytest.mark.parametrize("num_beams", [1, 4])
def test_no_output_repeats_a_trigram_and_without_the_rule_nothing_changes(tiny_translator, num_beams):

    sentences = [
        "Ein Mann fährt Fahrrad.",
        "Zwei Hunde spielen im Gras.",
        "Eine Frau singt ein Lied.",
        "Ein Hund Hund Hund Hund Hund Hund rennt rennt rennt rennt.",
    ]
    ids = [tiny_translator.encode_source(s)[0] for s in sentences]
    before = tiny_translator.generate_ids(ids, num_beams, 1.0, 40)
    try:
        tiny_translator.no_repeat_ngram = 3
        after = tiny_translator.generate_ids(ids, num_beams, 1.0, 40)
    finally:
        tiny_translator.no_repeat_ngram = 0
    assert tiny_translator.generate_ids(ids, num_beams, 1.0, 40) == before
    pad = tiny_translator.config.pad_id
    for row in after:
        assert not has_repeated_ngram([i for i in row if i != pad], 3), row
    assert any(has_repeated_ngram([i for i in row if i != pad], 3) for row in before), "nothing was repeated before"


def test_the_rule_is_saved_and_loaded_with_the_checkpoint(tiny_translator, tmp_path):
    from translation import Translator

    tiny_translator.no_repeat_ngram = 3
    try:
        folder = tiny_translator.save_pretrained(tmp_path / "ck")
    finally:
        tiny_translator.no_repeat_ngram = 0
    assert json.loads((folder / "decoding.json").read_text()) == {"no_repeat_ngram": 3}
    assert Translator.from_pretrained(folder).no_repeat_ngram == 3
    (folder / "decoding.json").write_text('{"no_repeat_ngram": NaN}')
    from model.checkpoint.hub import CheckpointError

    with pytest.raises(CheckpointError, match="decoding.json: no_repeat_ngram must be a whole number"):
        Translator.from_pretrained(folder)
    (folder / "decoding.json").write_text("[")
    with pytest.raises(CheckpointError, match="decoding.json is not valid JSON"):
        Translator.from_pretrained(folder)
