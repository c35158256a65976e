"""Sequence-level distillation: recipes/distill.py writes a teacher's translations of the training
sources (resuming an interrupted file), and train.py --distilled-targets reads them as Multi30k's English."""

import importlib.util
import json
from pathlib import Path

import pytest

import data
import train
from tests.corpus import DATA_DIR, needs_corpus
from training.evidence import training_corpora
from translation import Translator

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("distill", ROOT / "recipes" / "distill.py")
distill = importlib.util.module_from_spec(spec)
spec.loader.exec_module(distill)

TINY = [
    "--max-train-pairs",
    "200",
    "--max-steps",
    "2",
    "--eval-every",
    "2",
    "--max-eval-sentences",
    "4",
    "--batch-tokens",
    "1024",
    "--num-beams",
    "1",
    "--length-penalties",
    "1.0",
    "--threads",
    "1",
    "--snapshot-steps",
    "none",
    "--precision",
    "fp32",
    "--skip-test",
    "--vocab-size",
    "600",
    "--d-model",
    "32",
    "--n-heads",
    "2",
    "--n-layers",
    "1",
    "--d-ff",
    "64",
]


def test_the_teacher_translates_every_source_and_an_interrupted_file_resumes(tiny_checkpoint, tmp_path, monkeypatch):
    monkeypatch.setattr(distill, "CHUNK", 2)
    teacher = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    sources = ["Ein Hund läuft.", "Zwei Männer.", "Eine Frau singt.", "Ein Kind."]
    out = tmp_path / "targets.txt"
    out.with_name("targets.txt.partial").write_text("Kept one.\nKept two.\n")  # the first chunk of an interrupted run
    distill.distill(teacher, sources, out, num_beams=2, length_penalty=1.0)
    lines = out.read_text().splitlines()
    assert lines[:2] == ["Kept one.", "Kept two."] and len(lines) == 4 and all(line.strip() for line in lines)
    assert lines[2:] == [" ".join(h.split()) or "." for h in teacher.translate(sources[2:], num_beams=2)]
    assert not out.with_name("targets.txt.partial").exists()


def test_the_teacher_translates_the_ding_sentences_when_asked(tiny_checkpoint, tmp_path):
    from tests.test_everyday_corpus import make_tiny_ding

    ding_dir = make_tiny_ding(tmp_path / "ding")
    out = tmp_path / "ding-targets.txt"
    distill.main(
        [
            str(tiny_checkpoint),
            "--corpus",
            "ding",
            "--ding-dir",
            str(ding_dir),
            "--out",
            str(out),
            "--num-beams",
            "1",
            "--device",
            "cpu",
        ]
    )
    teacher = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    sources = data.load_split(ding_dir, "train").src
    assert out.read_text().splitlines() == [" ".join(h.split()) or "." for h in teacher.translate(sources, num_beams=1)]


def test_the_teachers_length_penalty_comes_from_its_results(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({"results": {"decoding": {"length_penalty": 1.4}}}))
    assert distill.teacher_length_penalty(tmp_path) == 1.4
    assert distill.teacher_length_penalty(tmp_path / "nowhere") == 1.0


@needs_corpus
def test_a_run_reads_the_distilled_english_and_a_file_of_another_length_is_refused(tmp_path):
    pairs = len(data.load_split(DATA_DIR, "train"))
    targets = tmp_path / "targets.txt"
    targets.write_text("".join(f"Zyxwvut number {i}.\n" for i in range(pairs)))
    german, english = training_corpora("multi30k", str(DATA_DIR), max_train_pairs=3, distilled=str(targets))["multi30k"]
    assert english == ["Zyxwvut number 0.", "Zyxwvut number 1.", "Zyxwvut number 2."] and len(german) == 3
    holed = tmp_path / "holed.txt"
    holed.write_text("A line.\n\n" + "A line.\n" * (pairs - 2))
    with pytest.raises(data.CorpusError, match="line 2 is empty"):
        training_corpora("multi30k", str(DATA_DIR), distilled=str(holed))
    out = tmp_path / "student"
    assert (
        train.main(
            [
                "--data-dir",
                str(DATA_DIR),
                "--distilled-targets",
                str(targets),
                "--output",
                str(out),
                "--work-dir",
                str(tmp_path / "w"),
                *TINY,
            ]
        )
        == 0
    )
    vocabulary = json.loads((out / "tokenizer.json").read_text())["model"]["vocab"]
    assert any("Zyxw" in piece for piece in vocabulary)  # the student's vocabulary learned the teacher's English
    assert json.loads((out / "results.json").read_text())["settings"]["distilled_targets"] == str(targets)
    short = tmp_path / "short.txt"
    short.write_text("Only one line.\n")
    with pytest.raises(SystemExit, match=rf"one non-empty line per Multi30k training pair \({pairs}\), not 1 lines"):
        train.main(
            [
                "--data-dir",
                str(DATA_DIR),
                "--distilled-targets",
                str(short),
                "--output",
                str(tmp_path / "x"),
                "--work-dir",
                str(tmp_path / "w2"),
                *TINY,
            ]
        )


@needs_corpus
def test_a_run_reads_a_teachers_english_of_the_ding_sentences(tmp_path, capsys):
    from tests.test_everyday_corpus import make_tiny_ding

    ding_dir = make_tiny_ding(tmp_path / "ding")
    targets = tmp_path / "ding-targets.txt"
    targets.write_text("".join(f"Qxqx beers {i}.\n" for i in range(40)))
    german, english = training_corpora(
        "multi30k+ding", str(DATA_DIR), str(ding_dir), max_train_pairs=3, distilled_ding=str(targets)
    )["ding"]
    assert english[:2] == ["Qxqx beers 0.", "Qxqx beers 1."] and german[0] == "Ich möchte 0 Bierchen."
    out = tmp_path / "student"
    mixed = ["--data-dir", str(DATA_DIR), "--corpus", "multi30k+ding", "--ding-dir", str(ding_dir)]
    assert (
        train.main(
            [*mixed, "--distilled-ding", str(targets), "--output", str(out), "--work-dir", str(tmp_path / "w"), *TINY]
        )
        == 0
    )
    assert any("Qxqx" in piece for piece in json.loads((out / "tokenizer.json").read_text())["model"]["vocab"])
    assert json.loads((out / "results.json").read_text())["settings"]["distilled_ding"] == str(targets)
    with pytest.raises(SystemExit, match=r"one non-empty line per Ding training pair \(40\), not 1 lines"):
        targets.write_text("Only one line.\n")
        train.main(
            [
                *mixed,
                "--distilled-ding",
                str(targets),
                "--output",
                str(tmp_path / "x"),
                "--work-dir",
                str(tmp_path / "w2"),
                *TINY,
            ]
        )
    with pytest.raises(SystemExit):
        train.main(
            ["--data-dir", str(DATA_DIR), "--distilled-ding", str(targets), "--output", str(tmp_path / "y"), *TINY]
        )
    assert "--distilled-ding needs --corpus multi30k+ding" in capsys.readouterr().err


@needs_corpus
def test_the_evidence_command_counts_the_more_corpora_a_run_read(tiny_checkpoint, tmp_path):
    """python -m training.evidence --more-corpora games:2 indexes that corpus beside Multi30k (each pair once)."""
    import gzip
    import shutil

    from training import evidence

    corpora = tmp_path / "corpora"
    (corpora / "games").mkdir(parents=True)
    (corpora / "games" / "train.de").write_text("Qxqxwort ist hier.\n", encoding="utf-8")
    (corpora / "games" / "train.en").write_text("Qxqxword is here.\n", encoding="utf-8")
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_checkpoint, folder)
    command = ["--checkpoint", str(folder), "--data-dir", str(DATA_DIR), "--corpora-dir", str(corpora)]
    assert evidence.main([*command, "--more-corpora", "games:2"]) == 0
    index = json.loads(gzip.decompress((folder / "evidence.json.gz").read_bytes()))
    assert index["corpora"] == ["multi30k", "games"] and index["sizes"]["games"] == 1
    assert [counts for word, (counts, _) in index["words"].items() if "qxqx" in word.lower()] == [[0, 1]]
    assert evidence.main([*command, "--more-corpora", "software"]) == 1  # a corpus not made is a one-line error
