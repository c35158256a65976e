"""recipes/everyday/wide_teacher.py packs a student into parts small enough to come back from a GPU machine,
and unpacks them into a checkpoint folder, refusing weights that are not the ones packed."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from translation import Translator

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("wide_teacher", ROOT / "recipes" / "everyday" / "wide_teacher.py")
wide_teacher = importlib.util.module_from_spec(spec)
spec.loader.exec_module(wide_teacher)


def test_a_packed_student_unpacks_into_the_same_checkpoint_and_a_changed_part_is_refused(
    tiny_checkpoint, tmp_path, monkeypatch
):
    monkeypatch.setattr(wide_teacher, "PART", 64 * 1024)
    student = tmp_path / "student"
    shutil.copytree(tiny_checkpoint, student)
    (student / "results.json").write_text(json.dumps({"settings": {"distilled_ding": "ding.txt"}}))
    teacher = tmp_path / "teacher"
    teacher.mkdir()
    (teacher / "results.json").write_text(json.dumps({"val": {"bleu": 1.5}}))
    files = {"multi30k": tmp_path / "multi30k-train.de-en.txt", "ding": tmp_path / "ding-train.de-en.txt"}
    for corpus, path in files.items():
        path.write_text(f"A {corpus} line.\n")
    packed = tmp_path / "packed"
    wide_teacher.pack(student, teacher, files, packed)
    parts = sorted(packed.glob("model.part*"))
    assert len(parts) > 1 and all(p.stat().st_size <= 64 * 1024 for p in parts)

    out = tmp_path / "unpacked" / "wide"
    wide_teacher.unpack(packed, out)
    assert (out / "model.safetensors").read_bytes() == (student / "model.safetensors").read_bytes()
    assert json.loads((out / "results.json").read_text())["settings"]["distilled_ding"] == "ding.txt"
    assert json.loads((tmp_path / "unpacked" / "wide-teacher" / "results.json").read_text()) == {"val": {"bleu": 1.5}}
    assert (tmp_path / "unpacked" / "wide-distill" / "ding-train.de-en.txt").read_text() == "A ding line.\n"
    sentence = ["Ein Hund läuft."]
    assert Translator.from_pretrained(out, device="cpu").translate(sentence) == Translator.from_pretrained(
        student, device="cpu"
    ).translate(sentence)

    damaged = bytearray(parts[1].read_bytes())
    damaged[100] ^= 0xFF
    parts[1].write_bytes(bytes(damaged))
    with pytest.raises(SystemExit, match="sha256 differs"):
        wide_teacher.unpack(packed, tmp_path / "again")
    assert not (tmp_path / "again").exists()  # nothing written from damaged weights


def test_more_corpora_reach_the_teacher_and_the_student_but_not_the_translations(tmp_path, monkeypatch):
    commands = []
    monkeypatch.setattr(wide_teacher, "run", lambda cmd, log: commands.append(cmd))
    monkeypatch.setattr(wide_teacher, "pack", lambda *args: commands.append(["pack"]))
    assert (
        wide_teacher.main(
            [
                "--out",
                str(tmp_path / "packed"),
                "--work",
                str(tmp_path / "work"),
                "--more-corpora",
                "backtranslated:2,games:2",
            ]
        )
        == 0
    )
    trains = [c for c in commands if c[0] == "train.py"]
    distills = [c for c in commands if c[0] == "recipes/distill.py"]
    assert len(trains) == 2 and len(distills) == 2 and commands[-1] == ["pack"]
    for cmd in trains:
        at = cmd.index("--more-corpora")
        assert cmd[at + 1] == "backtranslated:2,games:2"
    assert all("--more-corpora" not in c for c in distills)
    assert "--d-model" in trains[0] and "--init-from" in trains[1]  # the wide teacher, then the shipped student

    commands.clear()
    wide_teacher.main(["--out", str(tmp_path / "packed"), "--work", str(tmp_path / "work")])
    assert all("--more-corpora" not in c for c in commands)  # none unless asked
