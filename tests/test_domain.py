"""training_data/domain.py: the guess of which kind of German a text is (captions or everyday), its file and its checks."""

import gzip
import json
import logging
from pathlib import Path

import pytest

from training.domain import main as build_main
from training_data.checked_json import CheckpointFileError
from training_data.domain import (
    DOMAIN_FILE,
    build_counts,
    domain_file,
    features,
    guess_from,
    load_domain,
    read_domain,
    write_counts,
)

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS = [
    "Ein Mann fährt Fahrrad.",
    "Ein Hund rennt im Park.",
    "Zwei Kinder spielen am Strand.",
    "Eine Frau liest ein Buch.",
]
EVERYDAY = ["Ich möchte ein Bier.", "Wo ist der Bahnhof?", "Kannst du mir helfen?", "Ich habe keine Zeit."]


def test_features_are_the_tokens_and_the_first_and_last_of_them():
    assert features("Wo ist der Bahnhof?") == ["Wo", "ist", "der", "Bahnhof", "?", "<first>Wo", "<last>?"]
    assert features("   ") == []


def test_a_table_from_a_few_sentences_tells_the_two_kinds_apart_and_says_why():
    guess = guess_from(build_counts(CAPTIONS, EVERYDAY))
    assert guess.everyday("Wo ist mein Buch?") and not guess.everyday("Ein Mann liest am Strand.")
    report = guess.report("Wo ist mein Buch?")
    assert report["everyday"] and report["log_odds"] > 0 and report["words"][0] in ("?", "Wo")
    assert "Buch" not in report["words"]  # it pulls towards captions, not towards the guess
    assert guess.log_odds("") == 0.0 and not guess.everyday("")


def test_a_word_in_neither_corpus_leans_to_the_smaller_one():
    guess = guess_from(build_counts(CAPTIONS * 3, EVERYDAY))  # three times as many caption tokens
    assert guess.unseen > 0 and guess.log_odds("Heuschrecken") > 0


def test_the_file_is_written_read_back_and_built_by_its_command(tmp_path):
    path = write_counts(tmp_path, build_counts(CAPTIONS, EVERYDAY))
    assert path.name == DOMAIN_FILE and read_domain(path).everyday("Kannst du mir helfen?")
    with pytest.raises(SystemExit, match="no such checkpoint folder"):
        build_main(["--checkpoint", str(tmp_path / "missing")])


def tampered(tmp_path: Path, edit) -> Path:
    content = build_counts(CAPTIONS, EVERYDAY)
    edit(content)
    path = tmp_path / DOMAIN_FILE
    path.write_bytes(gzip.compress(json.dumps(content).encode()))
    return path


@pytest.mark.parametrize(
    "edit, phrase",
    [
        (lambda c: c.update(format=2), "format"),
        (lambda c: c.update(kinds=["everyday", "captions"]), "kinds"),
        (lambda c: c.update(sentences=[0, 4]), "sentences"),
        (lambda c: c.update(smoothing=float("nan")), "smoothing"),
        (lambda c: c.update(threshold=1e9), "threshold"),
        (lambda c: c.update(counts={}), "counts is empty"),
        (lambda c: c["counts"].update(Bier=[1]), "counts['Bier']"),
        (lambda c: c["counts"].update(Bier=[-1, 3]), "counts['Bier']"),
        (lambda c: c["counts"].update(Bier=[0, 0]), "counts['Bier']"),
        (lambda c: c["counts"].update(Bier=[True, 2]), "counts['Bier']"),
        (lambda c: c.pop("counts"), "lacks 'counts'"),
    ],
)
def test_a_tampered_file_is_refused_naming_it_and_the_entry(tmp_path, edit, phrase):
    path = tampered(tmp_path, edit)
    with pytest.raises(CheckpointFileError) as caught:
        read_domain(path)
    assert DOMAIN_FILE in str(caught.value) and phrase in str(caught.value) and "\n" not in str(caught.value)


def test_a_file_nested_deep_or_not_gzip_is_refused_and_the_checkpoint_goes_without(tmp_path, caplog):
    (tmp_path / DOMAIN_FILE).write_bytes(gzip.compress(b"[" * 100_000 + b"]" * 100_000))
    with pytest.raises(CheckpointFileError, match="nests"):
        read_domain(tmp_path / DOMAIN_FILE)
    (tmp_path / DOMAIN_FILE).write_bytes(b"not gzip")
    with caplog.at_level(logging.WARNING, logger="attention_lens"):
        assert load_domain(tmp_path) is None
    assert DOMAIN_FILE in caplog.text and "does not guess" in caplog.text
    assert load_domain(tmp_path / "nowhere") is None
    # the page's own guess gets a copy of the file only where it is checked (ui/export_site.model_files)
    assert domain_file(tmp_path) is None and domain_file(tmp_path / "nowhere") is None
    write_counts(tmp_path, build_counts(CAPTIONS, EVERYDAY))
    assert domain_file(tmp_path) == tmp_path / DOMAIN_FILE


def test_the_shipped_table_reads_everyday_german_and_captions_apart():
    guess = load_domain(ROOT / "checkpoints" / "de-en")
    assert guess is not None and guess.sentences == (29000, 18162)
    assert guess.everyday("Wo ist der Bahnhof?") and guess.everyday("Ich möchte ein Bier.")
    assert not guess.everyday("Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.")
