"""train.py end to end: the copy task, resuming after kill -9 and SIGTERM, two processes, a
Multi30k smoke run that loads back as a Translator."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import train
from generation import generate
from model import Transformer
from tests.corpus import DATA_DIR, needs_corpus
from translation import Translator

ROOT = Path(__file__).resolve().parent.parent
COPY_ARGS = ["--task", "copy", "--threads", "1", "--snapshot-steps", "none", "--precision", "fp32"]


def read_state_step(work_dir: Path) -> int:
    from safetensors import safe_open

    with safe_open(str(work_dir / "state.safetensors"), framework="pt") as f:
        return json.loads(f.metadata()["state"])["progress"]["step"]


@pytest.mark.slow
def test_copy_task_learns_to_copy_held_out_sequences(tmp_path):
    """The tutorials' first sanity check: a tiny model copies random sequences after < 1 minute."""
    out = tmp_path / "copy"
    assert (
        train.main([*COPY_ARGS, "--output", str(out), "--work-dir", str(tmp_path / "work"), "--max-steps", "600"]) == 0
    )
    results = json.loads((out / "results.json").read_text())
    print("copy accuracy:", results["results"]["copy_accuracy"])
    assert results["results"]["copy_accuracy"] >= 0.99
    model = Transformer.from_pretrained(out)  # the output folder loads like a Hub repo
    src = torch.tensor([[5, 9, 13, 7, 21, 6, 2]])
    assert generate(model, src, max_new_tokens=10).tolist() == [[5, 9, 13, 7, 21, 6, 2]]


def _start(args, log):
    return subprocess.Popen([sys.executable, "train.py", *args], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def _wait_for_state(work: Path, proc: subprocess.Popen, min_step: int, timeout: float = 120) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (work / "state.safetensors").exists() and read_state_step(work) >= min_step:
            return read_state_step(work)
        assert proc.poll() is None, "training ended before it was interrupted"
        time.sleep(0.2)
    raise AssertionError("no training state was written in time")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sigkill", "sigterm"])
def test_interrupted_run_resumes_where_it_stopped(tmp_path, how):
    work, out = tmp_path / "work", tmp_path / "out"
    args = [
        *COPY_ARGS,
        "--output",
        str(out),
        "--work-dir",
        str(work),
        "--max-steps",
        "200",
        "--save-every",
        "20",
        "--eval-every",
        "200",
    ]
    with open(tmp_path / "first.log", "wb") as log:
        proc = _start(args, log)
        saved = _wait_for_state(work, proc, min_step=40)
        proc.send_signal(signal.SIGKILL if how == "sigkill" else signal.SIGTERM)
        code = proc.wait(timeout=60)
    first_log = (tmp_path / "first.log").read_text()
    stopped = read_state_step(work)
    assert stopped >= saved >= 40
    if how == "sigterm":
        assert code == 0, first_log
        assert "rerun the same command to continue" in first_log  # saved on the way out, at any step
    else:
        assert code == -signal.SIGKILL
        assert stopped % 20 == 0  # at most the steps since the last --save-every are lost
    assert not out.exists()

    second = subprocess.run([sys.executable, "train.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"RESUMING from step {stopped} of 200" in second.stderr
    assert read_state_step(work) == 200
    assert json.loads((out / "results.json").read_text())["training"]["steps"] == 200
    loss_steps = [r["step"] for r in map(json.loads, (work / "metrics.jsonl").read_text().splitlines()) if "loss" in r]
    assert loss_steps == list(range(50, 201, 50))  # records written after the saved state were not repeated


def test_resume_with_other_model_settings_is_refused(tmp_path):
    work = tmp_path / "work"
    args = [*COPY_ARGS, "--output", str(tmp_path / "out"), "--work-dir", str(work), "--max-steps", "5"]
    assert train.main(args) == 0
    with pytest.raises(SystemExit, match="other settings.*d_model"):
        train.main([*args, "--d-model", "32"])


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--task", "copy", "--output", "x", "--max-steps", "5", "--hub-branch", "b"],
            "--hub-branch needs --push-to-hub",
        ),
        (
            ["--task", "copy", "--output", "x", "--max-steps", "5", "--snapshot-steps", "1,x"],
            "--snapshot-steps must be",
        ),
        (["--task", "copy", "--output", "x", "--max-steps", "5", "--adam-betas", "0.9"], "--adam-betas must be two"),
        (["--task", "copy", "--output", "x", "--max-steps", "5", "--data-dir", "d"], "copy makes its own data"),
        (["--task", "copy", "--output", "x", "--max-steps", "5", "--n-heads", "3"], "divisible"),
        (["--task", "copy", "--output", "x", "--max-steps", "5", "--bogus"], "unrecognized arguments: --bogus"),
        (["--output", "x", "--max-steps", "5", "--length-penalties", "a,b"], "comma-separated"),
    ],
)
def test_unknown_or_contradictory_flags_are_errors(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        train.parse_args(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_two_processes_train_with_distributed_data_parallel(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node=2",
            "--standalone",
            "train.py",
            *COPY_ARGS,
            "--output",
            str(out),
            "--work-dir",
            str(work),
            "--max-steps",
            "30",
            "--eval-every",
            "30",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (out / "model.safetensors").exists()
    assert read_state_step(work) == 30
    lines = [json.loads(x) for x in (work / "metrics.jsonl").read_text().splitlines()]
    assert sum("copy_accuracy" in r for r in lines) == 1  # only rank 0 evaluates and writes
    from safetensors.torch import load_file

    state = load_file(str(work / "state.safetensors"))
    assert not torch.equal(state["rng.torch.0"], state["rng.torch.1"])  # each rank's own generator is kept


@needs_corpus
def test_multi30k_smoke_run_loads_back_as_a_translator(tmp_path):
    out = tmp_path / "de-en"
    code = train.main(
        [
            "--data-dir",
            str(DATA_DIR),
            "--output",
            str(out),
            "--work-dir",
            str(tmp_path / "work"),
            "--max-train-pairs",
            "300",
            "--max-steps",
            "6",
            "--eval-every",
            "3",
            "--max-eval-sentences",
            "20",
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
            "--batch-tokens",
            "1024",
            "--num-beams",
            "2",
            "--length-penalties",
            "1.0",
            "--threads",
            "1",
            "--snapshot-steps",
            "none",
        ]
    )
    assert code == 0
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md"} <= {p.name for p in out.iterdir()}
    assert (out / "curves.png").stat().st_size > 1000
    results = json.loads((out / "results.json").read_text())
    assert {"results", "training", "settings", "data", "snapshots", "run_fingerprint"} <= set(results)
    assert set(results["results"]) == {"val", "test", "decoding"} and 0 <= results["results"]["test"]["bleu"] <= 100
    assert results["data"]["test_sentences"] == 20 and results["data"]["test_is_slice"]
    card = (out / "README.md").read_text()
    assert "first 20 of 1,000 sentences" in card and "model-index" not in card  # a slice is no benchmark score
    assert "label smoothing 0.1" in card and "batches of 1,024 tokens" in card  # the recorded recipe
    assert results["results"]["test"]["bleu_signature"].startswith("nrefs:1|case:mixed")
    translator = Translator.from_pretrained(out)
    english = translator.translate("Ein Mann fährt Fahrrad.", num_beams=2)
    assert isinstance(english, str)
    assert translator.translate(["", "Zwei Hunde."], num_beams=1)[0] == ""


def test_missing_corpus_gives_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit, match="^train.py: .* has no train.de.gz or train.de"):  # one line, no traceback
        train.main(
            [
                "--data-dir",
                str(tmp_path),
                "--output",
                str(tmp_path / "o"),
                "--work-dir",
                str(tmp_path / "w"),
                "--max-steps",
                "1",
            ]
        )
    assert not (tmp_path / "w").exists() and not (tmp_path / "o").exists()


@needs_corpus
@pytest.mark.slow
def test_time_limit_ends_the_schedule_and_skip_test_leaves_test_for_later(tmp_path):
    """--time-limit stops early but finishes (evaluated, snapshotted); --skip-test scores val only,
    and the same command with --evaluate-again scores test once."""
    out, work = tmp_path / "de-en", tmp_path / "work"
    args = [
        "--data-dir",
        str(DATA_DIR),
        "--output",
        str(out),
        "--work-dir",
        str(work),
        "--max-train-pairs",
        "300",
        "--max-steps",
        "100000",
        "--eval-every",
        "1000",
        "--max-eval-sentences",
        "10",
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
        "--batch-tokens",
        "1024",
        "--num-beams",
        "2",
        "--length-penalties",
        "1.0",
        "--threads",
        "1",
        "--snapshot-steps",
        "0",
        "--time-limit",
        "0.05",
    ]
    assert train.main([*args, "--skip-test"]) == 0
    results = json.loads((out / "results.json").read_text())
    last = results["training"]["steps"]
    assert 1 <= last < 100000 and read_state_step(work) == last
    assert set(results["results"]) == {"val", "decoding"} and not (out / "test_hypotheses.txt").exists()
    assert [s["step"] for s in results["snapshots"]] == [0, last]  # the last step is kept as a snapshot
    records = [json.loads(x) for x in (work / "metrics.jsonl").read_text().splitlines()]
    assert any(r.get("step") == last and "val_bleu" in r for r in records)  # evaluated at the last step
    assert train.main([*args, "--evaluate-again"]) == 0
    again = json.loads((out / "results.json").read_text())
    assert again["training"]["steps"] == last and 0 <= again["results"]["test"]["bleu"] <= 100
    assert again["results"]["val"]["bleu"] == results["results"]["val"]["bleu"]
    assert (out / "test_hypotheses.txt").read_text().count("\n") == 10
