"""training_data/truecase.py and training_data/language.py: German written in one case given back its capitals from counts, and the
check that tells German from other text, each from small tables built here and from the shipped files."""

import gzip
import json
from pathlib import Path

import pytest

from training_data.checked_json import CheckpointFileError
from training_data.domain import build_counts as domain_counts
from training_data.language import LANGUAGE_FILE, build_counts, check_from, load_language, read_language, write_counts
from training_data.truecase import Truecaser, load_truecaser, uncased, word_changes

CHECKPOINT = Path(__file__).resolve().parents[1] / "checkpoints" / "de-en"
CAPTIONS = ["Ein Mann trinkt ein Bier.", "Ein Hund trinkt Wasser.", "Eine Frau trinkt ein Bier im Park."]
EVERYDAY = ["Ich möchte ein Bier.", "Wo ist der Park?", "Ich trinke Wasser."]


def test_one_case_is_recased_by_the_counts_and_mixed_case_is_left_alone():
    truecaser = Truecaser.from_counts(domain_counts(CAPTIONS, EVERYDAY)["counts"])
    assert truecaser.spelling["bier"] == "Bier" and truecaser.spelling["ein"] == "ein"  # "Ein" starts sentences only
    assert truecaser.recase("ich möchte ein bier") == ("Ich möchte ein Bier", [("ich", "Ich"), ("bier", "Bier")])
    assert truecaser.recase("EIN HUND TRINKT WASSER.")[0] == "Ein Hund trinkt Wasser."
    assert truecaser.recase("EIN ZEBRA.")[0] == "Ein Zebra."  # unseen, in capitals: a noun's spelling
    assert truecaser.recase("ein zebra.")[0] == "Ein zebra."  # unseen, in lowercase: left so
    assert truecaser.recase("ein hund. ein mann.")[0] == "Ein Hund. Ein Mann."  # each sentence starts with a capital
    assert truecaser.recase("Ein hund trinkt.") == ("Ein hund trinkt.", [])  # mixed case: as written
    assert [uncased(t) for t in ("abc", "ABC", "Abc", "123", "a")] == ["lower", "upper", None, None, "lower"]
    assert word_changes("ein hund", "Ein Hund") == [("ein", "Ein"), ("hund", "Hund")]


def test_the_shipped_truecaser_gives_the_tutorials_beer_its_capital():
    truecaser = load_truecaser(CHECKPOINT)
    assert truecaser.recase("ich möchte ein bier")[0] == "Ich möchte ein Bier"
    assert truecaser.recase("wo ist der bahnhof?")[0] == "Wo ist der Bahnhof?"


def test_german_is_told_from_english_and_from_other_scripts():
    check = check_from(
        build_counts(
            CAPTIONS + EVERYDAY,
            ["A man drinks a beer.", "Where is the park?", "I would like a beer.", "A dog drinks water."],
        )
    )
    assert check.german("Ein Hund trinkt Wasser.") and not check.german("A dog drinks water.")
    assert (
        check.report("Where is the dog?") == {"german": False, "why": "english", "words": ["a", "drinks", "is"]}
        or check.report("Where is the dog?")["why"] == "english"
    )
    assert check.report("我想喝啤酒。")["why"] == "script" and check.report("🍺🍺")["why"] == "no letters"
    assert check.german("Zebra Giraffe")  # words on neither side: the benefit of the doubt


def test_the_shipped_check_names_what_is_not_german():
    check = load_language(CHECKPOINT)
    assert check.german("Wo ist der Bahnhof?") and check.german("ich möchte ein bier")
    assert check.report("Where is the station?")["words"][:2] == ["is", "the"]
    assert not check.german("你好") and not check.german("1234")


@pytest.mark.parametrize(
    "content, message",
    [
        ({"format": 2}, "format"),
        ({"languages": ["en", "de"]}, "languages"),
        ({"smoothing": -1}, "smoothing"),
        ({"counts": {"der": [1, -1]}}, "counts"),
        ({"counts": {}}, "counts is empty"),
    ],
)
def test_a_bad_language_file_is_refused_by_name(tmp_path, content, message):
    good = build_counts(["Der Hund."], ["The dog."])
    path = write_counts(tmp_path, {**good, **content})
    with pytest.raises(CheckpointFileError, match=message):
        read_language(path)
    assert path.name == LANGUAGE_FILE


def test_a_deep_or_huge_language_file_turns_the_check_off_with_one_warning(tmp_path, caplog):
    (tmp_path / LANGUAGE_FILE).write_bytes(gzip.compress(b"[" * 100_000 + b"]" * 100_000))
    assert load_language(tmp_path) is None
    (tmp_path / LANGUAGE_FILE).write_bytes(gzip.compress(json.dumps({"x": "a" * (5 << 20)}).encode()))
    assert load_language(tmp_path) is None
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2 and all(LANGUAGE_FILE in w and "does not check whether" in w for w in warned), warned
