"""Every JSON file the app reads from a checkpoint goes through one reader (model/checkpoint/json_file.py), bounded in
bytes and in nesting: a copy nested 100,000 deep and a copy past its size are each refused in one line that names
the file (a required file stops the load; an optional one turns its feature off with one warning), never a
RecursionError, never a silent +390 MB."""

import gzip
import logging
import shutil
from pathlib import Path

import pytest

from lens.importance import MAX_FILE_BYTES as IMPORTANCE_CAP
from lens.time_travel import SnapshotLibrary
from model import CheckpointError, ConfigError
from model.checkpoint.json_file import CheckpointFileError, read_json
from training_data.alarm import ALARM_FILE, AlarmRule, load_familiarity
from training_data.domain import DOMAIN_FILE, load_domain
from training_data.evidence import EVIDENCE_FILE
from training_data.language import LANGUAGE_FILE, load_language
from training_data.provenance import CAPTIONS_ONLY, MAX_RESULTS_BYTES, checkpoint_provenance
from translation import Translator
from translation.snapshots import MAX_INDEX_BYTES
from ui.head_lab_data import IMPORTANCE_FILE, load_importance

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints" / "de-en"
DEEP = b"[" * 100_000 + b"]" * 100_000


def huge(cap: int) -> bytes:
    """Valid JSON one byte past `cap`: an object with one long string."""
    return b'{"x": "' + b"a" * cap + b'"}'


@pytest.fixture()
def folder(tiny_checkpoint, tmp_path):
    """A copy of the tiny checkpoint with the shipped optional files beside it."""
    out = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, out)
    for name in (ALARM_FILE, DOMAIN_FILE, LANGUAGE_FILE, EVIDENCE_FILE, "results.json"):
        shutil.copy(SHIPPED / name, out / name)
    return out


def write(path: Path, raw: bytes) -> None:
    path.write_bytes(gzip.compress(raw) if path.name.endswith(".gz") else raw)


@pytest.mark.parametrize("content", ["deep", "huge"])
def test_a_required_file_stops_the_load_in_one_line_naming_it(folder, content):
    for name, cap, error in (("config.json", 64_000, ConfigError), ("decoding.json", 4096, CheckpointError)):
        original = (folder / name).read_bytes() if (folder / name).exists() else None
        write(folder / name, DEEP if content == "deep" else huge(cap))
        with pytest.raises(error) as raised:
            Translator.from_pretrained(folder, device="cpu")
        message = str(raised.value)
        assert name in message and "\n" not in message and ("nests" in message or "more than" in message), message
        if original is None:
            (folder / name).unlink()
        else:
            (folder / name).write_bytes(original)


OPTIONAL = {  # file -> (its loader's answer when the file is refused, how the answer shows it)
    EVIDENCE_FILE: (lambda f: load_familiarity(f).evidence, lambda v: v is None),
    ALARM_FILE: (lambda f: load_familiarity(f).rule, lambda v: v == AlarmRule()),
    DOMAIN_FILE: (load_domain, lambda v: v is None),
    LANGUAGE_FILE: (load_language, lambda v: v is None),
    "results.json": (checkpoint_provenance, lambda v: v == CAPTIONS_ONLY),
    IMPORTANCE_FILE: (lambda f: load_importance(str(f)), lambda v: v is None),
}
CAPS = {
    EVIDENCE_FILE: 16 << 20,
    ALARM_FILE: 64 << 10,
    DOMAIN_FILE: 16 << 20,
    LANGUAGE_FILE: 4 << 20,
    "results.json": MAX_RESULTS_BYTES,
    IMPORTANCE_FILE: IMPORTANCE_CAP,
}


@pytest.mark.parametrize("content", ["deep", "huge"])
@pytest.mark.parametrize("name", list(OPTIONAL))
def test_an_optional_file_turns_its_feature_off_with_one_line_naming_it(folder, caplog, name, content):
    load, off = OPTIONAL[name]
    write(folder / name, DEEP if content == "deep" else huge(CAPS[name]))
    with caplog.at_level(logging.WARNING, logger="attention_lens"):
        answer = load(folder)
    assert off(answer), (name, answer)
    lines = [r.getMessage() for r in caplog.records if name in r.getMessage()]
    assert lines and all("\n" not in line and ("nests" in line or "more than" in line) for line in lines), [
        r.getMessage() for r in caplog.records
    ]


@pytest.mark.parametrize("content", ["deep", "huge"])
def test_a_snapshot_index_is_refused_naming_it(tmp_path, content):
    root = tmp_path / "run"
    (root / "snapshots").mkdir(parents=True)
    write(root / "snapshots" / "index.json", DEEP if content == "deep" else huge(MAX_INDEX_BYTES))
    with pytest.raises(ValueError) as raised:
        SnapshotLibrary(str(root)).snapshots()
    assert "index.json" in str(raised.value) and "Recursion" not in str(raised.value)


def test_the_reader_counts_depth_before_parsing_and_stops_at_its_cap(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a": [[1, 2], {"b": "[[[[["}]}')
    assert read_json(path, 100, max_depth=3) == {"a": [[1, 2], {"b": "[[[[["}]}  # brackets in strings do not count
    with pytest.raises(CheckpointFileError, match="nests 3 levels deep; this file nests at most 2"):
        read_json(path, 100, max_depth=2)
    with pytest.raises(CheckpointFileError, match="more than 10 bytes"):
        read_json(path, 10)
