"""A run resumes only its own state, never overwrites a folder it did not write, derives its work
folder from the full output path, picks a fast precision, and says when it is finished."""

import json
import re
from pathlib import Path

import pytest
import torch

import train
from model import CheckpointError, Transformer
from tests.corpus import DATA_DIR, needs_corpus
from training import hardware
from training.guard import RunError, check_output, check_state_belongs
from training.run import RUNS_DIR, default_work_dir
from translation import Translator

ROOT = Path(__file__).resolve().parent.parent


def copy_args(tmp_path: Path, output: str = "out", work: str = "work", steps: int = 4) -> list[str]:
    return [
        "--task",
        "copy",
        "--threads",
        "1",
        "--snapshot-steps",
        "none",
        "--output",
        str(tmp_path / output),
        "--work-dir",
        str(tmp_path / work),
        "--max-steps",
        str(steps),
        "--eval-every",
        "2",
        "--save-every",
        "2",
    ]


def test_state_of_another_output_is_refused(tmp_path):
    assert train.main(copy_args(tmp_path)) == 0
    with pytest.raises(SystemExit, match=r"belongs to another run \(its output was .*out, not .*other\)"):
        train.main(copy_args(tmp_path, output="other"))


def test_state_trained_on_other_data_is_refused(tmp_path):
    assert train.main(copy_args(tmp_path)) == 0
    from training.checkpointing import read_state_meta

    recorded = read_state_meta(tmp_path / "work" / "state.safetensors")["run"]
    assert check_state_belongs(tmp_path / "work" / "state.safetensors", recorded) is not None  # its own run
    other = {**recorded, "data": {"train_text_sha256": "0" * 64}}
    with pytest.raises(RunError, match="other data"):
        check_state_belongs(tmp_path / "work" / "state.safetensors", other)


def test_existing_output_is_kept_unless_overwrite(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit, match="already exists and was not written by this run.*--overwrite"):
        train.main(copy_args(tmp_path))
    assert not (tmp_path / "work" / "state.safetensors").exists()  # refused before the first step
    assert train.main([*copy_args(tmp_path), "--overwrite"]) == 0
    assert not (tmp_path / "out" / "notes.txt").exists() and (tmp_path / "out" / "model.safetensors").exists()


def test_git_tracked_checkpoint_is_never_replaced_without_overwrite(tmp_path):
    shipped = ROOT / "checkpoints" / "de-en"
    before = (shipped / "model.safetensors").stat().st_mtime_ns
    with pytest.raises(RunError, match="tracked by git"):
        check_output(shipped, {"output": str(shipped)}, overwrite=False)
    with pytest.raises(SystemExit, match="tracked by git"):
        train.main(["--task", "copy", "--output", str(shipped), "--work-dir", str(tmp_path / "w"), "--max-steps", "2"])
    assert (shipped / "model.safetensors").stat().st_mtime_ns == before
    assert not (tmp_path / "w").exists()  # refused before any work


def test_default_work_dir_is_derived_from_the_full_output_path(tmp_path, monkeypatch):
    a, b = default_work_dir(tmp_path / "x" / "de-en"), default_work_dir(tmp_path / "y" / "de-en")
    assert a != b and a.parent == b.parent == RUNS_DIR == ROOT / "runs"
    assert re.fullmatch(r"de-en-[0-9a-f]{8}", a.name)
    monkeypatch.chdir(tmp_path)
    assert default_work_dir("x/de-en") == a  # relative or absolute: the same folder
    assert "runs/" in (ROOT / ".gitignore").read_text()


def test_finished_run_says_so_and_exits_unless_asked_to_evaluate_again(tmp_path, capsys):
    assert train.main(copy_args(tmp_path)) == 0
    results = tmp_path / "out" / "results.json"
    first = results.stat().st_mtime_ns
    capsys.readouterr()
    assert train.main(copy_args(tmp_path)) == 0
    assert "this run is finished (4 steps)" in capsys.readouterr().err
    assert results.stat().st_mtime_ns == first  # nothing evaluated or written again
    assert train.main([*copy_args(tmp_path), "--evaluate-again"]) == 0
    assert results.stat().st_mtime_ns != first


def test_resumed_run_announces_itself_and_records_real_throughput(tmp_path, capsys):
    assert train.main(copy_args(tmp_path, steps=4)) == 0
    capsys.readouterr()
    assert train.main(copy_args(tmp_path, steps=6)) == 0  # the same run, trained on
    err = capsys.readouterr().err
    assert "RESUMING from step 4 of 6" in err and "it belongs to this run" in err
    training = json.loads((tmp_path / "out" / "results.json").read_text())["training"]
    assert training["steps"] == 6 and training["tokens_per_s"] > 0
    records = [json.loads(line) for line in (tmp_path / "work" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [2, 4, 6]  # one evaluation record a step, none repeated


@pytest.mark.parametrize(
    "flags, device, bf16",
    [({"avx512f", "avx512_bf16"}, "cpu", True), ({"amx_bf16"}, "cpu", True), ({"avx2"}, "cpu", False)],
)
def test_auto_precision_follows_the_cpu(monkeypatch, flags, device, bf16):
    monkeypatch.setattr(hardware, "cpu_flags", lambda: flags)
    chosen, why = hardware.choose_precision("auto", torch.device(device))
    assert chosen is bf16
    assert ("bf16 autocast: the CPU has" in why) if bf16 else ("fp32: the CPU lacks" in why)
    assert (
        hardware.choose_precision("bf16", torch.device("cpu"))[0]
        and not hardware.choose_precision("fp32", torch.device("cpu"))[0]
    )


def test_copy_task_output_is_a_transformer_not_a_translator(tmp_path):
    assert train.main(copy_args(tmp_path)) == 0
    out = tmp_path / "out"
    assert "This is not a translator" in (out / "README.md").read_text()
    assert "Translation German to English" not in (out / "README.md").read_text()  # its own card
    Transformer.from_pretrained(out)
    with pytest.raises(CheckpointError, match="tokenizer.json is missing"):
        Translator.from_pretrained(out)


@pytest.mark.parametrize("work", ["out/work", "out"])
def test_a_work_folder_inside_the_output_is_refused_before_any_step(tmp_path, work):
    with pytest.raises(SystemExit, match="overlap: the output folder is replaced"):
        train.main(copy_args(tmp_path, output="out", work=work))
    assert not (tmp_path / "out").exists()


def test_a_state_beyond_the_schedule_is_refused(tmp_path):
    from safetensors import safe_open
    from safetensors.torch import save_file

    from training.checkpointing import read_state_meta

    state = tmp_path / "work" / "state.safetensors"
    assert train.main(copy_args(tmp_path, steps=2)) == 0
    meta = read_state_meta(state)
    meta["progress"].update(step=10**9, finished=False)
    with safe_open(str(state), framework="pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    save_file(tensors, str(state), metadata={"state": json.dumps(meta)})
    with pytest.raises(SystemExit, match="says step 1,000,000,000, beyond this run's schedule of 6 steps"):
        train.main(copy_args(tmp_path, steps=6))


@needs_corpus
def test_a_garbage_tokenizer_in_the_work_folder_is_named_in_one_line(tmp_path):
    args = [
        "--data-dir",
        str(DATA_DIR),
        "--output",
        str(tmp_path / "out"),
        "--work-dir",
        str(tmp_path / "work"),
        "--max-train-pairs",
        "100",
        "--max-steps",
        "1",
        "--max-eval-sentences",
        "4",
        "--vocab-size",
        "300",
        "--d-model",
        "16",
        "--n-heads",
        "2",
        "--n-layers",
        "1",
        "--d-ff",
        "32",
        "--batch-tokens",
        "512",
        "--num-beams",
        "1",
        "--length-penalties",
        "1.0",
        "--threads",
        "1",
    ]
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "tokenizer.json").write_text('{"version": "1.0", "model": 42}')
    with pytest.raises(
        SystemExit,
        match=r"tokenizer.json is not a readable tokenizer.json.*delete .* to learn the "
        r"tokenizer again",
    ):
        train.main(args)
