"""Tampered checkpoint files: each is refused by name with what is wrong with it, in one line.

Optional files (the evidence index, the alarm rule, the head importance) turn their feature off with
that line as a warning, and the rest of the checkpoint loads; a bad required file stops the start
in one line, without a traceback; a snapshot's tokenizer is checked like the final model's."""

import gzip
import json
import logging
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from lens.importance import read_importance
from model.checkpoint.hub import CheckpointError
from model.checkpoint.weights import CONFIG_KEY, TOKENIZER_FIELD, read_header
from model.config import TransformerConfig
from tokenizer import fingerprint, load_tokenizer
from training_data.alarm import ALARM_FILE, AlarmRule, load_familiarity, load_rule
from training_data.checked_json import CheckpointFileError
from training_data.evidence import EVIDENCE_FILE, build_index, read_index
from translation.snapshots import list_snapshots, load_snapshot
from ui.head_lab_data import IMPORTANCE_FILE, importance_payload, load_importance

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints" / "de-en"
CAPTIONS = (
    ["Ein Hund rennt.", "Zwei Hunde rennen im Park.", "Ein Hund schläft.", "Ein Mann fährt Fahrrad."],
    ["A dog runs.", "Two dogs run in the park.", "A dog sleeps.", "A man rides a bike."],
)
DEEP = "[" * 100_000 + "]" * 100_000


def refused(load, name: str, *phrases: str) -> str:
    """Run `load`, which must refuse its file: one line naming `name` and saying each of `phrases`."""
    with pytest.raises(CheckpointFileError) as caught:
        load()
    message = str(caught.value)
    assert name in message and "\n" not in message, message
    for phrase in phrases:
        assert phrase in message, message
    return message


def write_index(folder: Path, index: dict | str) -> Path:
    path = folder / EVIDENCE_FILE
    text = index if isinstance(index, str) else json.dumps(index)
    path.write_bytes(gzip.compress(text.encode()))
    return path


def edited(index: dict, edit) -> dict:
    edit(index)
    return index


def swap_two_ids(path: Path, into: Path) -> None:
    """tokenizer.json with two ordinary tokens' ids swapped: the same size and special ids, other tokens."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    a, b = [token for token, i in vocab.items() if i in (100, 101)]
    vocab[a], vocab[b] = vocab[b], vocab[a]
    into.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


# ----- the evidence index ----------------------------------------------------------------------

EVIDENCE_TAMPERINGS = {
    "sizes a list": (lambda i: i.update(sizes=[4]), "sizes is a list, not an object"),
    "bigrams an int": (lambda i: i.update(bigrams=7), "bigrams is a number, not a list"),
    "no corpora": (lambda i: i.update(corpora=[]), "corpora is [], not a list of 1 to"),
    "pairs not pairs": (lambda i: i.update(pairs=[["Ein Hund rennt."]] + i["pairs"][1:]), "pairs[0] is"),
    "a word entry an int": (lambda i: i["words"].update(hund=5), "words['hund'] is 5, not [counts per corpus"),
    "an example id out of range": (
        lambda i: i["words"]["hund"].__setitem__(1, [99]),
        "words['hund'].examples is 99, not an example id from 0 to",
    ),
    "a count a string": (
        lambda i: i["words"]["hund"].__setitem__(0, ["x"]),
        "words['hund'].count['multi30k'] is 'x', not a whole number",
    ),
    "a NaN count": (lambda i: i["words"]["hund"].__setitem__(0, [math.nan]), "count['multi30k'] is nan"),
    "a negative count": (lambda i: i["words"]["hund"].__setitem__(0, [-3]), "count['multi30k'] is -3"),
    "true as a count": (lambda i: i["words"]["hund"].__setitem__(0, [True]), "count['multi30k'] is True"),
    "a count per corpus missing": (lambda i: i["words"]["hund"].__setitem__(0, []), "has 0 counts for 1 corpora"),
    "four examples": (lambda i: i["words"]["hund"].__setitem__(1, [0, 1, 2, 3]), "has 4 examples"),
    "a word pair not text": (lambda i: i.update(bigrams=[12]), "bigrams[0] is 12, not two words"),
    "a corpus without its size": (lambda i: i.update(sizes={"ding": 4}), "sizes lacks 'multi30k'"),
    "an unknown field": (lambda i: i.update(extra=[1] * 10), "unknown field(s) 'extra'"),
}


@pytest.mark.parametrize("tampering", list(EVIDENCE_TAMPERINGS))
def test_a_tampered_evidence_entry_is_refused_naming_the_file_and_the_entry(tmp_path, tampering):
    edit, phrase = EVIDENCE_TAMPERINGS[tampering]
    path = write_index(tmp_path, edited(build_index({"multi30k": CAPTIONS}), edit))
    refused(lambda: read_index(path), EVIDENCE_FILE, phrase)


def test_an_evidence_index_nested_100k_deep_is_refused_in_words(tmp_path):
    path = write_index(
        tmp_path, '{"format": 1, "corpora": ["multi30k"], "pairs": [], "words": {}, "bigrams": ' + DEEP + "}"
    )
    refused(lambda: read_index(path), EVIDENCE_FILE, "nests 100,001 levels deep")


def test_an_index_past_its_decompressed_cap_is_refused_before_it_is_read_whole(tmp_path):
    """~100 MB of JSON (2.2 million word entries' worth) in well under 16 MB of gzip."""
    entry = "".join(f'"hundehüttenbauerin{i:04d}":[[12345],[0,1,2]],' for i in range(500)).encode()
    path = tmp_path / EVIDENCE_FILE
    with gzip.open(path, "wb", compresslevel=1) as file:
        file.write(b'{"format":1,"corpora":["multi30k"],"pairs":[["a","b"]],"words":{')
        while file.tell() < 100_000_000:
            file.write(entry)
        file.write(b'"hund":[[1],[0]]},"bigrams":[],"sizes":{"multi30k":1}}')
    assert path.stat().st_size < 16 << 20
    refused(lambda: read_index(path, vocab_size=8000), EVIDENCE_FILE, "decompresses to more than 32,768,000 bytes")


def test_an_index_with_more_words_than_its_vocabulary_allows_is_refused(tmp_path):
    words = {f"w{i}": [[1], []] for i in range(100_001)}  # well under the byte cap
    path = write_index(
        tmp_path,
        {"format": 1, "corpora": ["multi30k"], "pairs": [], "words": words, "bigrams": [], "sizes": {"multi30k": 1}},
    )
    refused(
        lambda: read_index(path, vocab_size=600),
        EVIDENCE_FILE,
        "holds 100,001 words",
        "a vocabulary of 600 tokens holds at most 100,000",
    )  # at least 100,000, else 32 per token


# ----- the alarm rule --------------------------------------------------------------------------

ALARM_TAMPERINGS = {
    "confidence_below a string": ({"confidence_below": "abc"}, "rule.confidence_below is 'abc', not a finite number"),
    "confidence_below NaN": ({"confidence_below": math.nan}, "rule.confidence_below is nan"),
    "rare_share_above NaN": ({"rare_share_above": math.nan}, "rule.rare_share_above is nan"),
    "unseen_pairs_above infinite": ({"unseen_pairs_above": math.inf}, "rule.unseen_pairs_above is inf"),
    "confidence_below above 0": ({"confidence_below": 3.0}, "rule.confidence_below is 3.0, not a finite number from"),
    "rare_below not whole": ({"rare_below": 2.5}, "rule.rare_below is 2.5, not a whole number"),
    "a share below 0": ({"rare_share_above": -1}, "rule.rare_share_above is -1"),
}


@pytest.mark.parametrize("tampering", list(ALARM_TAMPERINGS))
def test_a_tampered_alarm_rule_is_refused_naming_the_file_and_the_number(tmp_path, tampering):
    change, phrase = ALARM_TAMPERINGS[tampering]
    stored = json.loads((SHIPPED / ALARM_FILE).read_text())
    stored["rule"].update(change)
    (tmp_path / ALARM_FILE).write_text(json.dumps(stored))
    refused(lambda: load_rule(tmp_path), ALARM_FILE, phrase)


def test_an_alarm_rule_missing_a_number_too_large_or_nested_deep_is_refused(tmp_path):
    stored = json.loads((SHIPPED / ALARM_FILE).read_text())
    del stored["rule"]["unseen_pairs_above"]
    (tmp_path / ALARM_FILE).write_text(json.dumps(stored))
    refused(lambda: load_rule(tmp_path), ALARM_FILE, "rule lacks 'unseen_pairs_above'")
    (tmp_path / ALARM_FILE).write_text('{"rule": ' + DEEP + "}")
    refused(lambda: load_rule(tmp_path), ALARM_FILE, "holds more than 65,536 bytes")
    (tmp_path / ALARM_FILE).write_text('{"rule": ' + "[" * 20_000 + "]" * 20_000 + "}")  # under the cap
    refused(lambda: load_rule(tmp_path), ALARM_FILE, "nests 20,001 levels deep")


# ----- head importance -------------------------------------------------------------------------


def importance_text(edit) -> str:
    record = json.loads((SHIPPED / IMPORTANCE_FILE).read_text())
    edit(record)
    return json.dumps(record)


IMPORTANCE_TAMPERINGS = {
    "not JSON": (lambda: "{'version': 1,", "is not valid JSON"),
    "nested 100k deep": (lambda: '{"kinds": ' + DEEP + "}", "nests 100,001 levels deep"),
    "the shape of another model": (lambda: importance_text(lambda r: r["shape"].update(n_heads=8)), "'n_heads': 8"),
    "a layer missing": (
        lambda: importance_text(lambda r: r["kinds"]["cross"]["importance"].pop()),
        "kinds.cross.importance is",
    ),
    "a head missing": (
        lambda: importance_text(lambda r: r["kinds"]["encoder"]["only"]["val_loss"][1].pop()),
        "kinds.encoder.only.val_loss[1] is",
    ),
    "a NaN figure": (
        lambda: importance_text(lambda r: r["kinds"]["decoder"]["importance"][0].__setitem__(2, math.nan)),
        "kinds.decoder.importance[0][2] is nan, not a finite number",
    ),
    "a figure a string": (
        lambda: importance_text(lambda r: r["baseline"].update(val_bleu="43")),
        "baseline.val_bleu is '43'",
    ),
    "an agreement above 1": (
        lambda: importance_text(lambda r: r["kinds"]["cross"]["agreement"][0].__setitem__(0, 7)),
        "kinds.cross.agreement[0][0] is 7",
    ),
    "kinds a list": (lambda: importance_text(lambda r: r.update(kinds=[])), "kinds is a list, not an object"),
}


@pytest.fixture(scope="module")
def shipped_config():
    return TransformerConfig.from_json_file(SHIPPED / "config.json")


@pytest.mark.parametrize("tampering", list(IMPORTANCE_TAMPERINGS))
def test_a_tampered_head_importance_is_refused_and_the_page_shows_no_figures(
    tmp_path, caplog, shipped_config, tampering
):
    make, phrase = IMPORTANCE_TAMPERINGS[tampering]
    (tmp_path / IMPORTANCE_FILE).write_text(make())
    refused(lambda: read_importance(tmp_path / IMPORTANCE_FILE, shipped_config), IMPORTANCE_FILE, phrase)
    with caplog.at_level(logging.WARNING):
        loaded = load_importance(str(tmp_path), None, shipped_config)
    assert loaded is None and importance_payload(loaded, shipped_config)["importance"] is None
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and IMPORTANCE_FILE in warned[0] and phrase in warned[0], warned
    assert "head-importance figures are off" in warned[0] and "\n" not in warned[0]


# ----- a bad optional file turns its feature off; a bad required one stops the start -----------


def test_a_bad_optional_file_turns_its_feature_off_and_the_rest_still_loads(tmp_path, caplog):
    shutil.copy(SHIPPED / "config.json", tmp_path / "config.json")
    shutil.copy(SHIPPED / ALARM_FILE, tmp_path / ALARM_FILE)
    index = build_index({"multi30k": CAPTIONS})
    write_index(tmp_path, edited(json.loads(json.dumps(index)), lambda i: i.update(sizes=[4])))
    with caplog.at_level(logging.WARNING):
        familiarity = load_familiarity(tmp_path)
    stored = json.loads((SHIPPED / ALARM_FILE).read_text())["rule"]["confidence_below"]
    assert familiarity.evidence is None and familiarity.rule.confidence_below == stored  # the alarm still works
    assert familiarity.report("Ein Hund rennt.", torch.full((4,), 0.9).numpy())["evidence"] == []
    write_index(tmp_path, index)
    (tmp_path / ALARM_FILE).write_text(json.dumps({"rule": {**AlarmRule().to_dict(), "confidence_below": "abc"}}))
    with caplog.at_level(logging.WARNING):
        familiarity = load_familiarity(tmp_path)
    assert familiarity.rule == AlarmRule() and familiarity.evidence.word("hund")["count"] == 2
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2 and all("\n" not in w for w in warned), warned
    assert EVIDENCE_FILE in warned[0] and "sizes is a list" in warned[0] and "evidence is off" in warned[0]
    assert ALARM_FILE in warned[1] and "confidence_below is 'abc'" in warned[1] and "alarm rule is off" in warned[1]


@pytest.mark.slow  # starts app.py
def test_a_bad_required_file_stops_the_start_in_one_line_without_a_traceback(tmp_path):
    for name in ("model.safetensors", "tokenizer.json"):
        os.symlink(SHIPPED / name, tmp_path / name)
    (tmp_path / "config.json").write_text('{"d_model": ' + "[" * 30_000 + "]" * 30_000 + "}")
    env = {**os.environ, "MODEL_ID": str(tmp_path), "EVERYDAY_MODEL_ID": "none"}
    result = subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert lines[-1].startswith("Attention Lens cannot start:") and "config.json" in lines[-1], lines[-3:]


# ----- snapshots: their tokenizer checked -------------------------------------------------------


def test_the_shipped_snapshots_record_the_tokenizer_of_the_final_model():
    final = read_header(SHIPPED / "model.safetensors").tokenizer
    for snapshot in list_snapshots(SHIPPED):
        assert read_header(Path(snapshot.path) / "model.safetensors").tokenizer == final, snapshot


def unrecorded_run(tmp_path: Path) -> Path:
    """A run whose step-0 snapshot records no tokenizer fingerprint (as snapshots once did)."""
    run = tmp_path / "run"
    folder = run / "snapshots" / "step-00000"
    folder.mkdir(parents=True)
    shutil.copy(SHIPPED / "tokenizer.json", run / "tokenizer.json")
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(SHIPPED / "snapshots" / "step-00000" / name, folder / name)
    recorded = read_header(SHIPPED / "snapshots" / "step-00000" / "model.safetensors").config
    recorded.pop(TOKENIZER_FIELD, None)
    state = load_file(str(SHIPPED / "snapshots" / "step-00000" / "model.safetensors"))
    save_file(state, str(folder / "model.safetensors"), metadata={CONFIG_KEY: json.dumps(recorded, sort_keys=True)})
    (run / "snapshots" / "index.json").write_text(json.dumps({"snapshots": [{"step": 0, "path": "step-00000"}]}))
    return run


def test_a_snapshot_with_two_token_ids_swapped_is_refused_naming_its_tokenizer(tmp_path):
    run = unrecorded_run(tmp_path)
    snapshot = list_snapshots(run)[0]
    assert read_header(Path(snapshot.path) / "model.safetensors").tokenizer is None
    assert load_snapshot(run, snapshot).tokenizer.get_vocab_size() == 8000  # its own tokenizer is the final one's
    swap_two_ids(SHIPPED / "tokenizer.json", Path(snapshot.path) / "tokenizer.json")
    assert fingerprint(load_tokenizer(Path(snapshot.path))) != fingerprint(load_tokenizer(run))
    with pytest.raises(CheckpointError) as caught:
        load_snapshot(run, snapshot)
    message = str(caught.value)
    assert str(Path(snapshot.path) / "tokenizer.json") in message and "not the tokenizer of the final model" in message
