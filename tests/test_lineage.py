"""Time travel across fine-tuning (training/lineage.py): a run started from another checkpoint lists that
checkpoint's snapshots, its final weights, then its own snapshots counted on from there, each loadable."""

import json
import shutil
from pathlib import Path

import pytest
import torch

import train
from model import Transformer
from tests.corpus import needs_corpus, tiny_run
from training import lineage
from translation.snapshots import list_snapshots, load_snapshot
from ui import time_travel


@pytest.fixture(scope="module")
def base_and_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("lineage")
    base, run = root / "base", root / "run"
    assert (
        train.main(
            tiny_run(
                base,
                root / "w-base",
                4,
                2,
                "0,2",
                "--max-eval-sentences",
                "5",
                "--vocab-size",
                "500",
                "--num-beams",
                "1",
                "--skip-test",
            )
        )
        == 0
    )
    assert (
        train.main(
            tiny_run(
                run,
                root / "w-run",
                3,
                3,
                "1,2",
                "--max-eval-sentences",
                "5",
                "--num-beams",
                "1",
                "--skip-test",
                "--init-from",
                str(base),
            )
        )
        == 0
    )
    return base, run


@needs_corpus
def test_the_run_lists_the_base_history_then_its_own_steps(base_and_run):
    base, run = base_and_run
    before = {s.step for s in list_snapshots(run)}
    lineage.main(["--base", str(base), "--run", str(run), "--base-phase", "captions", "--phase", "both"])
    snapshots = list_snapshots(run)
    start = lineage.final_step(base, lineage.read_entries(base))
    assert start == 4 and before == {1, 2}  # the final weights are no snapshot of their own
    assert [s.step for s in snapshots] == [0, 2, 4, 5, 6, 7]  # the base's 0, 2 and final 4; the run's 1, 2, final 3
    index = json.loads((run / "snapshots" / "index.json").read_text())["snapshots"]
    assert [e["phase"] for e in index] == ["captions"] * 3 + ["both"] * 3
    assert [s.phase for s in snapshots] == ["captions"] * 3 + ["both"] * 3  # what the time-travel slider says
    assert time_travel.entry(snapshots[-1])["phase"] == "both"
    assert json.loads((run / "results.json").read_text())["snapshots"][3]["step"] == 5
    assert index[-1]["path"] == ".." and isinstance(index[-1]["val_bleu"], float)  # the kept weights, their figures
    # the base's final weights, in fp16, are the snapshot at its step; the run's last entry is the run itself
    at_start = Transformer.from_pretrained(snapshots[2].path)
    torch.testing.assert_close(
        at_start.embed.weight, Transformer.from_pretrained(base).embed.weight, atol=1e-3, rtol=1e-3
    )
    assert not torch.equal(at_start.embed.weight, Transformer.from_pretrained(snapshots[3].path).embed.weight)
    for snapshot in snapshots:
        assert isinstance(load_snapshot(run, snapshot).translate("Ein Hund.", num_beams=1), str)


@needs_corpus
def test_extending_twice_changes_nothing_and_a_bad_base_is_refused(base_and_run, tmp_path, capsys):
    base, run = base_and_run
    lineage.main(["--base", str(base), "--run", str(run)])
    first = (run / "snapshots" / "index.json").read_text()
    lineage.main(["--base", str(base), "--run", str(run)])
    assert (run / "snapshots" / "index.json").read_text() == first
    with pytest.raises(SystemExit):
        lineage.main(["--base", str(tmp_path), "--run", str(run)])
    assert "not a checkpoint folder" in capsys.readouterr().err


@needs_corpus
def test_the_last_point_is_the_step_whose_weights_were_kept(base_and_run, tmp_path):
    base, run = base_and_run
    fresh = tmp_path / "run"
    shutil.copytree(run, fresh)
    shutil.rmtree(fresh / "snapshots")  # the run's own snapshots (steps 1 and 2) as train.py wrote them
    shutil.copytree(run.parent / "w-run" / "snapshots", fresh / "snapshots")
    results = json.loads((fresh / "results.json").read_text())
    results["settings"]["eval_every"], results["training"]["weights"] = 1, "best"
    (fresh / "results.json").write_text(json.dumps(results))
    rows = [
        {"step": 1, "val_bleu": 9.0, "val_bleu_mean": 6.0},
        {"step": 2, "val_bleu": 8.0, "val_bleu_mean": 5.0},
        {"step": 3, "val_bleu": 9.0, "val_bleu_mean": 6.0},
    ]  # a tie: the loop kept the first
    (fresh / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    lineage.extend(base, fresh, "captions", "both")
    snapshots = list_snapshots(fresh)
    assert [s.step for s in snapshots] == [0, 2, 4, 5]  # the run's step 1 is its kept weights: the last point
    assert snapshots[-1].val_bleu == 9.0 and Path(snapshots[-1].path).resolve() == fresh.resolve()
    assert not (fresh / "snapshots" / "step-00006").exists()  # taken after the kept weights: left out


@needs_corpus
def test_a_soup_last_point_is_named_apart_without_the_run_figures(base_and_run, tmp_path):
    base, run = base_and_run
    fresh = tmp_path / "soup"
    shutil.copytree(run, fresh)
    shutil.rmtree(fresh / "snapshots")
    shutil.copytree(run.parent / "w-run" / "snapshots", fresh / "snapshots")
    lineage.extend(base, fresh, "captions", "both", final_phase="both, averaged with captions")
    last = list_snapshots(fresh)[-1]
    assert last.phase == "both, averaged with captions" and last.val_bleu is None


@needs_corpus
def test_a_base_fine_tuned_itself_keeps_its_phase_and_dropped_steps_lose_their_folders(base_and_run, tmp_path):
    base, run = base_and_run
    lineage.extend(base, run, "captions", "both")  # the run's own history, as a second fine-tuning finds it
    second = tmp_path / "second"
    shutil.copytree(run, second)
    shutil.rmtree(second / "snapshots")
    shutil.copytree(run.parent / "w-run" / "snapshots", second / "snapshots")
    lineage.extend(run, second, "captions", "more", drop=frozenset({2, 8}))
    snapshots = list_snapshots(second)
    assert [s.step for s in snapshots] == [0, 4, 5, 6, 7, 9, 10]  # 2 (the base's) and 8 (the second run's 1) left out
    assert [s.phase for s in snapshots] == ["captions"] * 2 + ["both"] * 3 + ["more"] * 2  # 7: the first run's final
    assert not (second / "snapshots" / "step-00002").exists() and not (second / "snapshots" / "step-00008").exists()
    for snapshot in snapshots:
        assert isinstance(load_snapshot(second, snapshot).translate("Ein Hund.", num_beams=1), str)
