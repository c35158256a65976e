"""The English-only text for back-translation (corpora/wordnet_examples.py), on small synthetic WordNet data files
and a .deb made here; train.py --reverse (English -> German) on a tiny run; the synthetic pairs a reverse model makes
of the text (corpora/back_translation.py), tagged, resumable."""

import json
import shutil
import subprocess

import pytest

from corpora import wordnet_examples
from tests.corpus import needs_corpus, tiny_run
from training.settings import TrainSettings

NOUN = """  1 This software and database is being provided to you, the LICENSEE, by Princeton University "quoted"
00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 | that which is perceived; "he was elected to a seat in the Senate"; "polar diameter"
00002137 03 n 02 abstraction 0 | a general concept; "polar diameter"; "a prissy creature...settles into a mold"; "x"
00002452 03 n 01 thing 0 | an entity; "A man is riding a bike."; "42 -- 7"
"""
VERB = """00022316 29 v 05 sedate 0 | cause to be calm; "They  sedated the patient before the operation"; "she sleeps"
"""


def data_files(root):
    folder = root / "usr" / "share" / "wordnet"
    folder.mkdir(parents=True)
    (folder / "data.noun").write_text(NOUN, encoding="latin-1")
    (folder / "data.verb").write_text(VERB, encoding="latin-1")
    return folder


def test_extract_keeps_examples_by_the_rules(tmp_path):
    data_files(tmp_path)
    found = wordnet_examples.extract(tmp_path, held={"a man is riding a bike"})
    assert found.kept == [
        "He was elected to a seat in the Senate.",
        "polar diameter",
        "They sedated the patient before the operation.",
        "she sleeps",
    ]
    assert found.sentences == 2  # "she sleeps" has fewer than 4 words: left as it is
    assert found.dropped == {"duplicate": 1, "ellipsis": 1, "length": 1, "held out": 1, "no letter": 1}


def test_a_folder_without_data_files_is_refused_by_name(tmp_path):
    from corpora.apt_packages import PackageError

    with pytest.raises(PackageError, match="no WordNet data files"):
        wordnet_examples.extract(tmp_path, set())


def test_build_from_a_local_deb_writes_the_text_and_its_source(tmp_path, monkeypatch):
    if not shutil.which("dpkg-deb"):
        pytest.skip("dpkg-deb is not installed")
    tree = tmp_path / "tree"
    data_files(tree)
    (tree / "DEBIAN").mkdir()
    (tree / "DEBIAN/control").write_text(
        "Package: wordnet-base\nVersion: 1:3.0-37\nArchitecture: all\nMaintainer: x <x@y>\nDescription: test\n"
    )
    debs = tmp_path / "debs"
    debs.mkdir()
    subprocess.run(
        ["dpkg-deb", "-b", str(tree), str(debs / "wordnet-base_3.0_all.deb")], check=True, capture_output=True
    )
    monkeypatch.setattr(wordnet_examples, "held_out", lambda *a: set())
    from corpora.apt_packages import PackageError

    with pytest.raises(PackageError, match="--any-version"):  # not the sha256 of Debian's wordnet-base 1:3.0-37
        wordnet_examples.build(tmp_path / "out", debs)
    record = wordnet_examples.build(tmp_path / "out", debs, any_version=True)
    lines = (tmp_path / "out" / "wordnet" / "train.en").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "He was elected to a seat in the Senate." and len(lines) == record["examples"] == 5
    source = json.loads((tmp_path / "out" / "wordnet" / "SOURCE.json").read_text(encoding="utf-8"))
    assert source == record and source["packages"][0]["license"].startswith("WordNet-3.0")


def test_reverse_refuses_what_does_not_apply():
    with pytest.raises(ValueError, match="--reverse"):
        TrainSettings(output="x", reverse=True, distilled_targets="t.txt", epochs=1).validate()
    assert TrainSettings(output="x", reverse=True, epochs=1).validate().identity()["reverse"] is True
    assert "reverse" not in TrainSettings(output="x", epochs=1).validate().identity()


@pytest.mark.slow  # a reverse run trains for a few seconds
@needs_corpus
def test_a_reverse_run_learns_english_to_german(tmp_path):
    """--reverse swaps every split: the model reads the English of a pair and is scored on its German; the run
    writes no evidence index (it counts German source words)."""
    import train
    from data import load_split
    from tests.corpus import DATA_DIR
    from training.tasks import TranslationTask

    settings = TrainSettings(
        output=str(tmp_path / "x"),
        data_dir=str(DATA_DIR),
        max_train_pairs=50,
        reverse=True,
        max_eval_sentences=30,
        epochs=1,
    ).validate()
    task = TranslationTask(settings, tmp_path / "tok" / "tokenizer.json")
    val = load_split(DATA_DIR, "val")
    assert task.val.src == val.tgt[:30] and task.val.tgt == val.src[:30] and task.test.tgt[0].startswith("Ein")
    out = tmp_path / "out"
    assert train.main(tiny_run(out, tmp_path / "work", 20, 10, "none", "--reverse", "--max-eval-sentences", "30")) == 0
    assert json.loads((out / "results.json").read_text())["settings"]["reverse"] is True
    assert not (out / "evidence.json.gz").exists() and (out / "model.safetensors").exists()


@pytest.mark.parametrize(
    "english, german, why",
    [
        ("a formal ball", "ein formeller Ball", None),
        ("a ball", " ", "empty"),
        ("Hello", "hello", "copied"),
        ("a ball", "ein " * 7, "too long"),
        ("he was also there", "er war auch auch auch da", "stutters"),
        ("nanny", "NANNNNNA", "stutters"),
        ("a tall wall", "eine sehr sehr hohe Mauer", None),
    ],
)
def test_what_a_back_translation_keeps(english, german, why):
    from corpora.back_translation import kept

    assert kept(english, german) == why


@pytest.mark.slow  # a reverse model translates a corpus in chunks, twice
def test_back_translation_writes_tagged_pairs_and_resumes_from_whole_chunks(tiny_checkpoint, tmp_path):
    """The tiny checkpoint stands in for the reverse model: every kept pair has the tagged German as its source and
    the English line as its target; a run stopped after 11 lines keeps its first whole chunk (8) and redoes the rest."""
    from corpora import back_translation

    lines = [f"a man with {n} dogs" for n in range(20)] + ["a woman is reading a book in the park"] * 2
    text = tmp_path / "wordnet" / "train.en"
    text.parent.mkdir()
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (text.parent / "SOURCE.json").write_text('{"corpus": "wordnet"}')
    out = tmp_path / "backtranslated"
    first = back_translation.build(tiny_checkpoint, text, out, num_beams=1, chunk=8)
    de = (out / "train.de").read_text(encoding="utf-8").splitlines()
    en = (out / "train.en").read_text(encoding="utf-8").splitlines()
    assert len(de) == len(en) == first["pairs"] and first["pairs"] + sum(first["dropped"].values()) == len(lines)
    assert all(line.startswith("<BT> ") for line in de) and set(en) <= set(lines)
    assert first["text_source"] == {"corpus": "wordnet"} and len(first["reverse_weights_sha256"]) == 64
    partial = next(out.glob("partial-*.de"))
    done = partial.read_text(encoding="utf-8").splitlines()
    partial.write_text("\n".join(["Ein Mann MARKE"] + done[1:11]) + "\n", encoding="utf-8")  # stopped after 11
    again = back_translation.build(tiny_checkpoint, text, out, num_beams=1, chunk=8)
    redone = partial.read_text(encoding="utf-8").splitlines()
    assert redone[0] == "Ein Mann MARKE" and redone[1:] == done[1:] and again["lines"] == len(lines)


def test_the_synthetic_corpus_is_a_more_corpora_name():
    settings = TrainSettings(output="x", corpus="multi30k+ding", more_corpora="backtranslated:2,games", epochs=1)
    assert settings.validate().more_corpora_repeats() == {"backtranslated": 2, "games": 1}
