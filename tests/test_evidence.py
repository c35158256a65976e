"""Evidence from the training data and the unfamiliar-input alarm: the index counts what the corpus
holds, round-trips through its file, is refused when damaged, and the alarm says why it fires."""

import gzip
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import data
from tests.corpus import DATA_DIR, needs_corpus
from training_data.alarm import (
    ALARM_FILE,
    AlarmRule,
    Familiarity,
    judge,
    load_familiarity,
    load_rule,
    rare_share,
)
from training_data.evidence import (
    EVIDENCE_FILE,
    MAX_EXAMPLES,
    EvidenceError,
    build_index,
    german_words,
    load_evidence,
    read_index,
    write_index,
)

CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "de-en"

CAPTIONS = (
    [
        "Ein Hund rennt.",
        "Zwei Hunde rennen im Park.",
        "Ein Hund schläft.",
        "Ein Mann fährt Fahrrad.",
        "Ein Hund und ein Mann.",
        "Eine Frau liest.",
    ],
    [
        "A dog runs.",
        "Two dogs run in the park.",
        "A dog sleeps.",
        "A man rides a bike.",
        "A dog and a man.",
        "A woman reads.",
    ],
)
EVERYDAY = (["Ich möchte ein Bier.", "Der Hund bellt."], ["I'd like a beer.", "The dog barks."])


def test_words_are_lowercased_letters_with_inner_hyphens_and_apostrophes():
    assert german_words("Wie geht’s? Die E-Mail kam um 10 Uhr.") == [
        "wie",
        "geht's",
        "die",
        "e-mail",
        "kam",
        "um",
        "uhr",
    ]


def test_the_index_counts_every_word_per_corpus_and_keeps_examples_from_multi30k_only(tmp_path):
    index = build_index({"multi30k": CAPTIONS, "ding": EVERYDAY})
    evidence = read_index(write_index(tmp_path, index))
    dog = evidence.word("hund")
    assert (
        dog["counts"] == {"multi30k": 3, "ding": 1} and dog["count"] == 4
    )  # "Hunde" is another word and not dog["rare"]
    assert len(dog["examples"]) == MAX_EXAMPLES
    assert [e["de"] for e in dog["examples"]] == ["Ein Hund rennt.", "Ein Hund schläft.", "Ein Hund und ein Mann."]
    beer = evidence.word("bier")
    assert beer["count"] == 1 and beer["rare"] and beer["examples"] == []  # Ding sentences are never copied
    assert evidence.word("katze") == {
        "word": "katze",
        "count": 0,
        "counts": {"multi30k": 0, "ding": 0},
        "examples": [],
        "rare": False,
        "unseen": True,
    }
    assert [w["word"] for w in evidence.for_sentence("Ein Hund, ein Hund!")] == ["ein", "hund"]
    assert evidence.unseen_bigrams("Ein Hund bellt laut.") == (["bellt laut"], 3)  # "hund bellt": in Ding


@needs_corpus
def test_the_shipped_index_counts_what_multi30k_train_holds():
    evidence = load_evidence(CHECKPOINT)
    train = data.load_split(DATA_DIR, "train")
    counts = Counter(w for sentence in train.src for w in german_words(sentence))
    for word in ("hund", "fährt", "möchte", "bahnhof", "ich"):
        entry = evidence.word(word)
        assert entry["counts"]["multi30k"] == counts[word], word  # the captions, beside the other corpora it read
        assert entry["count"] == sum(entry["counts"].values())
        for example in entry["examples"]:
            assert word in german_words(example["de"]) and example["en"]
    assert evidence.sizes["multi30k"] == len(train)


def test_a_damaged_or_foreign_index_is_refused_naming_the_file(tmp_path):
    (tmp_path / EVIDENCE_FILE).write_bytes(b"not gzip")
    with pytest.raises(EvidenceError, match=EVIDENCE_FILE):
        load_evidence(tmp_path)
    (tmp_path / EVIDENCE_FILE).write_bytes(gzip.compress(json.dumps({"format": 99}).encode()))
    with pytest.raises(EvidenceError, match="format 1"):
        load_evidence(tmp_path)
    assert load_evidence(tmp_path / "missing") is None


def test_the_alarm_fires_on_each_signal_and_says_why():
    rule = AlarmRule(confidence_below=-0.5, rare_below=3, rare_share_above=0.4, unseen_pairs_above=0.5)
    sure, unsure = np.full(5, 0.9), np.full(5, 0.3)
    words = [{"word": "ein", "count": 100}, {"word": "hund", "count": 50}]
    assert judge(sure, words, rule)["unfamiliar"] is False
    verdict = judge(unsure, words, rule)
    assert verdict["unfamiliar"] and "unsure" in verdict["reasons"][0] and "-1.20" in verdict["reasons"][0]
    rare = [{"word": "wetter", "count": 0}, {"word": "heute", "count": 1}, {"word": "ist", "count": 90}]
    verdict = judge(sure, rare, rule)
    assert verdict["unfamiliar"] and "'wetter' (neverx)" not in verdict["reasons"][0]
    assert "'wetter' (never)" in verdict["reasons"][0] and "'heute' (1x)" in verdict["reasons"][0]
    verdict = judge(sure, words, rule, (["wo ist", "der bahnhof"], 3))
    assert verdict["unfamiliar"] and "2 of its 3 word pairs" in verdict["reasons"][0]
    assert rare_share([0, 1, 90], 3) == pytest.approx(2 / 3) and rare_share([], 3) == 0.0


def test_a_checkpoint_without_evidence_keeps_the_confidence_only_alarm(tmp_path):
    familiarity = load_familiarity(tmp_path)
    assert familiarity.evidence is None and familiarity.rule == AlarmRule()
    report = familiarity.report("Ein Hund.", np.full(3, 0.99))
    assert report == {"evidence": [], "unfamiliar": False, "reasons": [], "alarms": []}
    (tmp_path / ALARM_FILE).write_text('{"rule": {"confidence_below": -0.3, "bogus": 1}}')
    with pytest.raises(ValueError, match=ALARM_FILE):
        load_rule(tmp_path)


def test_familiarity_reports_evidence_and_alarm_for_a_sentence(tmp_path):
    write_index(tmp_path, build_index({"multi30k": CAPTIONS}))
    (tmp_path / ALARM_FILE).write_text(
        json.dumps(
            {"rule": {"confidence_below": -2.0, "rare_below": 2, "rare_share_above": 0.5, "unseen_pairs_above": 1.01}}
        )
    )
    familiarity = load_familiarity(tmp_path)
    report = familiarity.report("Ich möchte ein Bier.", np.full(6, 0.9))
    assert [w["word"] for w in report["evidence"]] == ["ich", "möchte", "ein", "bier"]
    assert report["unfamiliar"] and "75%" in report["reasons"][0]
    assert familiarity.report("Ein Hund rennt.", np.full(4, 0.9))["unfamiliar"] is False
    assert isinstance(familiarity, Familiarity)
