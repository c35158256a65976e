"""Damaged work directories: states that must be refused (naming the file and the fault), a torn
metrics line and a damaged rotation checkpoint that a run survives, no duplicate records after a
resume, and unwritable locations found before the first step. Real files, tampered in tmp folders."""

import json
import time
import warnings
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import train
from model import Transformer
from training.checkpointing import save_training_weights
from training.settings import TrainSettings
from training.tasks import CopyTask, weight_candidates


def copy_args(tmp_path: Path, steps: int = 4, *extra: str) -> list[str]:
    return [
        "--task",
        "copy",
        "--threads",
        "1",
        "--snapshot-steps",
        "none",
        "--output",
        str(tmp_path / "out"),
        "--work-dir",
        str(tmp_path / "work"),
        "--max-steps",
        str(steps),
        "--eval-every",
        "2",
        "--save-every",
        "2",
        *extra,
    ]


@pytest.fixture
def run_copy(tmp_path) -> Path:
    """A finished 4-step copy run: state at step 4, rotation checkpoints of steps 2 and 4, best.
    (Made in place: a state belongs to its own output path, so it cannot be copied elsewhere.)"""
    assert train.main(copy_args(tmp_path)) == 0
    return tmp_path


def tamper_state(folder: Path, change) -> Path:
    path = folder / "work" / "state.safetensors"
    with safe_open(str(path), framework="pt") as f:
        meta = json.loads(f.metadata()["state"])
    tensors = load_file(str(path))
    change(tensors, meta)
    save_file(tensors, str(path), metadata={"state": json.dumps(meta)})
    return path


def refused(folder: Path, match: str) -> float:
    """Resume (asking for 2 more steps) and expect a refusal; returns the seconds it took."""
    start = time.perf_counter()
    with pytest.raises(SystemExit, match=match):
        train.main(copy_args(folder, 6))
    return time.perf_counter() - start


def test_state_missing_optimizer_tensors_is_refused(run_copy):
    path = tamper_state(run_copy, lambda t, m: t.pop("optim.3.exp_avg_sq"))
    seconds = refused(run_copy, f"{path}.*lacks optimizer tensors of parameter 3")
    assert seconds < 10  # refused at start-up, not after training


def test_state_with_negative_step_is_refused(run_copy):
    path = tamper_state(run_copy, lambda t, m: m["progress"].update(step=-3))
    refused(run_copy, f"{path}: progress.step is -3")


def test_state_with_nan_weights_is_refused(run_copy):
    def poison(tensors, meta):
        name = "model.embed.weight"
        tensors[name] = tensors[name].clone()
        tensors[name][5, 0] = float("nan")

    path = tamper_state(run_copy, poison)
    refused(run_copy, f"{path}: weight .* holds NaN")


def test_truncated_state_names_the_file(run_copy):
    path = run_copy / "work" / "state.safetensors"
    path.write_bytes(path.read_bytes()[:1000])
    refused(run_copy, f"cannot read the training state {path}")


def test_torn_last_metrics_line_is_reported_and_dropped_and_nothing_duplicates(run_copy):
    metrics = run_copy / "work" / "metrics.jsonl"
    # What a kill leaves: a record written after the saved state (step 5) and half a line.
    with open(metrics, "a") as f:
        f.write(json.dumps({"step": 5, "loss": 1.0}) + "\n" + '{"step": 6, "val_lo')
    with pytest.warns(UserWarning, match=f"{metrics}: the last line .* incomplete"):
        assert train.main(copy_args(run_copy, 6)) == 0
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [r["step"] for r in records] == [2, 4, 6]  # the step-5 record and the torn line are gone, step 6 once


def test_damaged_rotation_checkpoint_is_skipped_with_a_warning(run_copy, tmp_path):
    ckpt = run_copy / "work" / "ckpt-2.safetensors"
    ckpt.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    with pytest.warns(UserWarning, match=f"skipping the damaged checkpoint {ckpt}"):
        assert train.main([*copy_args(run_copy), "--evaluate-again"]) == 0
    # Averaging uses the readable ones only: the mean of two good files, the broken one left out.
    settings = TrainSettings(output="", task="copy", max_steps=1).validate()
    model = Transformer(CopyTask(settings).config)
    good = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        other = Transformer(model.config)
        good.append(other.state_dict())
        save_training_weights(other, tmp_path / f"good-{seed}.safetensors")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        candidates = weight_candidates(
            model,
            tmp_path / "none.safetensors",
            [tmp_path / "good-1.safetensors", ckpt, tmp_path / "good-2.safetensors"],
        )
    assert any(str(ckpt) in str(w.message) for w in caught)
    assert set(candidates) == {"average"}
    for name, value in candidates["average"].items():
        torch.testing.assert_close(value, (good[0][name] + good[1][name]) / 2)


@pytest.mark.parametrize("flag", ["--output", "--work-dir"])
def test_unwritable_locations_are_found_before_the_first_step(tmp_path, flag):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    args = copy_args(tmp_path)
    args[args.index(flag) + 1] = str(blocker / "inside")
    start = time.perf_counter()
    with pytest.raises(SystemExit, match=f"cannot write to .*{blocker}"):
        train.main(args)
    assert time.perf_counter() - start < 10
    assert not (tmp_path / "work" / "state.safetensors").exists()


def test_state_round_trip_restores_both_random_generators(tmp_path):
    import random

    from training.checkpointing import load_state, rng_state, save_state
    from training.run import RunState

    settings = TrainSettings(output="", task="copy", max_steps=1).validate()
    model = Transformer(CopyTask(settings).config)
    optimizer = torch.optim.Adam(model.parameters())
    random.seed(5)
    torch.manual_seed(6)
    save_state(tmp_path / "state.safetensors", model, optimizer, RunState(epoch=2), {"run": 1}, [rng_state()])
    expected = (random.random(), torch.rand(3))
    random.seed(99)
    torch.manual_seed(99)
    progress = load_state(tmp_path / "state.safetensors", model, optimizer, rank=0)
    assert progress.epoch == 2
    got = (random.random(), torch.rand(3))
    assert got[0] == expected[0] and torch.equal(got[1], expected[1])
