"""Snapshots of training: written at the planned steps as loadable fp16 checkpoints with their val
figures, listed from a local folder or (offline) from a Hub repo's refs in the cache, and loaded."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

import train
from model import Transformer
from tests.corpus import needs_corpus, tiny_run
from training.settings import auto_snapshot_steps
from translation import Translator
from translation.snapshots import Snapshot, list_snapshots, load_snapshot

ROOT = Path(__file__).resolve().parent.parent
SENTENCES = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee."]


def dtypes(folder: Path) -> set:
    with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
        return {f.get_slice(k).get_dtype() for k in f.keys()}


@pytest.mark.slow
def test_copy_run_snapshots_the_auto_steps_as_loadable_fp16_checkpoints(tmp_path):
    out = tmp_path / "out"
    assert (
        train.main(
            [
                "--task",
                "copy",
                "--threads",
                "1",
                "--output",
                str(out),
                "--work-dir",
                str(tmp_path / "w"),
                "--max-steps",
                "20",
                "--eval-every",
                "10",
            ]
        )
        == 0
    )
    expected = auto_snapshot_steps(20)
    snapshots = list_snapshots(out)
    assert [s.step for s in snapshots] == expected == [0, 1, 2, 3, 4, 7, 12, 20]
    assert sorted(p.name for p in (out / "snapshots").glob("step-*")) == [f"step-{s:05d}" for s in expected]
    first, last = (Transformer.from_pretrained(snapshots[i].path) for i in (0, -1))
    assert dtypes(Path(snapshots[0].path)) == {"F16"}
    assert first.embed.weight.dtype == torch.float32  # fp16 on disk, fp32 once loaded
    assert not torch.equal(first.embed.weight, last.embed.weight)
    assert all(s.val_loss is not None for s in snapshots) and snapshots[-1].val_loss < snapshots[0].val_loss
    final = Transformer.from_pretrained(out)  # the step-20 snapshot is the final weights in fp16
    torch.testing.assert_close(last.embed.weight, final.embed.weight, atol=1e-3, rtol=1e-3)


@needs_corpus
def test_translation_snapshots_load_as_translators_with_val_figures(tmp_path):
    out = tmp_path / "de-en"
    # steps past the end are left out
    assert (
        train.main(
            tiny_run(
                out,
                tmp_path / "work",
                4,
                4,
                "0,2,4,99",
                "--max-eval-sentences",
                "10",
                "--vocab-size",
                "500",
                "--num-beams",
                "2",
            )
        )
        == 0
    )
    snapshots = list_snapshots(out)
    assert [s.step for s in snapshots] == [0, 2, 4]
    assert all(s.val_bleu is not None and s.val_loss is not None for s in snapshots)
    for snapshot in snapshots:
        translator = load_snapshot(out, snapshot)
        assert isinstance(translator, Translator) and isinstance(translator.translate(SENTENCES[0], num_beams=1), str)
        card = (Path(snapshot.path) / "README.md").read_text()
        assert f"snapshot taken at step {snapshot.step}" in card
    results = json.loads((out / "results.json").read_text())
    assert [s["revision"] for s in results["snapshots"]] == ["step-00000", "step-00002", "step-00004"]
    assert "`step-00004`" in (out / "README.md").read_text()


def write_cache(hf_home: Path, repo_id: str, revisions: dict[str, Path], refs: dict[str, str]) -> None:
    """huggingface_hub's cache layout: blobs by hash, snapshots/<commit>/<path> links, refs/<branch>."""
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    for commit, folder in revisions.items():
        for file in (p for p in folder.rglob("*") if p.is_file()):
            content = file.read_bytes()
            blob = repo / "blobs" / hashlib.sha256(content).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(content)
            link = repo / "snapshots" / commit / file.relative_to(folder)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
    for ref, commit in refs.items():
        (repo / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)


@needs_corpus
def test_hub_snapshots_are_listed_and_loaded_offline_from_the_cache(tiny_checkpoint, tmp_path):
    base = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    folders = {}
    for seed in (0, 2):
        torch.manual_seed(seed + 7)
        folders[seed] = Translator(Transformer(base.config), base.tokenizer).save_pretrained(tmp_path / f"s{seed}")
    main = tmp_path / "main"
    base.save_pretrained(main)
    (main / "snapshots").mkdir()
    index = [
        {"step": s, "revision": f"step-{s:05d}", "path": f"step-{s:05d}", "val_loss": 5.0 - s, "val_bleu": 1.0 + s}
        for s in (0, 2)
    ]
    (main / "snapshots" / "index.json").write_text(json.dumps({"snapshots": index}))
    shas = {"main": "a" * 40, "step-00000": "b" * 40, "step-00002": "c" * 40}
    write_cache(
        tmp_path / "hf",
        "user/lens",
        {shas["main"]: main, shas["step-00000"]: folders[0], shas["step-00002"]: folders[2]},
        shas,
    )
    expected = Translator.from_pretrained(folders[2], device="cpu").translate(SENTENCES, num_beams=1)
    code = f"""
import json
from translation.snapshots import list_snapshots, load_snapshot
snaps = list_snapshots("user/lens")
t = load_snapshot("user/lens", snaps[-1], device="cpu")
print(json.dumps({{"snaps": [s.__dict__ for s in snaps], "out": t.translate({SENTENCES!r}, num_beams=1)}}))
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    listed = [Snapshot(**s) for s in answer["snaps"]]
    assert listed == [
        Snapshot(0, revision="step-00000", val_loss=5.0, val_bleu=1.0),
        Snapshot(2, revision="step-00002", val_loss=3.0, val_bleu=3.0),
    ]
    assert answer["out"] == expected


SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / "de-en"


def test_shipped_snapshots_load_in_step_order_and_end_with_the_shipped_model():
    snapshots = list_snapshots(SHIPPED)
    steps = [s.step for s in snapshots]
    assert steps == sorted(steps) and steps[0] == 0 and len(steps) >= 3
    assert all(s.val_bleu is not None and s.val_loss is not None for s in snapshots)
    first = [s.val_bleu for s in snapshots if s.phase == snapshots[0].phase]  # the captions, learned from scratch
    assert first == sorted(first) and len(first) >= 3  # attention is being learned
    assert snapshots[-1].val_bleu >= first[-1]  # the fine-tuning (docs/everyday.md) kept the captions
    final = load_snapshot(SHIPPED, snapshots[-1]).model.state_dict()
    shipped = Translator.from_pretrained(SHIPPED).model.state_dict()
    assert all(torch.equal(final[k], shipped[k]) for k in shipped)  # the last point is the model itself
    middle = load_snapshot(SHIPPED, snapshots[1]).model.state_dict()
    assert not all(torch.equal(middle[k], shipped[k]) for k in shipped)  # a point of the run, not a copy


def test_shipped_step_0_is_the_untrained_model_of_the_runs_seed():
    """Step 0 is rebuilt from the seed (recipes/unpack_levers.py): it must equal a fresh model of that seed."""
    settings = json.loads((SHIPPED / "results.json").read_text())["settings"]
    snapshot = next(s for s in list_snapshots(SHIPPED) if s.step == 0)
    loaded = load_snapshot(SHIPPED, snapshot).model
    torch.manual_seed(settings["seed"])
    fresh = Transformer(loaded.config).half().float()
    assert all(torch.equal(fresh.state_dict()[k], v) for k, v in loaded.state_dict().items())


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"path": "step-00000"}, "no whole 'step'"),
        ({"step": "x", "path": "step-00000"}, "no whole 'step'"),
        ({"step": -1, "path": "step-00000"}, "no whole 'step'"),
        ({"step": 3, "path": "../../elsewhere"}, "no 'path' inside"),
        ({"step": 3}, "no 'path' inside"),
        ("step-3", "not an object"),
    ],
)
def test_a_broken_index_entry_is_refused_naming_the_index(tmp_path, entry, message):
    from translation.snapshots import list_snapshots

    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "index.json").write_text(json.dumps({"snapshots": [entry]}))
    with pytest.raises(ValueError, match=message):
        list_snapshots(tmp_path)


def test_the_time_travel_view_says_why_when_the_index_is_broken(tmp_path):
    from lens.time_travel import SnapshotLibrary
    from ui.time_travel import catalog

    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "index.json").write_text(json.dumps({"snapshots": [{"path": "step-00000"}]}))
    shown = catalog(SnapshotLibrary(tmp_path, 1))
    assert "could not be read" in shown["message"] and "no whole 'step'" in shown["message"]


def test_a_deeply_nested_index_is_said_in_words_and_names_no_server_path(tmp_path):
    from lens.time_travel import SnapshotLibrary
    from ui.time_travel import catalog

    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "index.json").write_text('{"snapshots": ' + "[" * 100_000 + "]" * 100_000 + "}")
    shown = catalog(SnapshotLibrary(tmp_path, 1))
    assert "could not be read" in shown["message"] and "nests 100,001 levels deep" in shown["message"], shown
    assert "RecursionError" not in shown["message"]  # named in words, not a bare RecursionError
    assert str(tmp_path) not in str(shown)


def test_a_corrupt_snapshot_is_said_with_its_message_and_the_others_still_listed(tiny_checkpoint, tmp_path):
    import shutil

    from lens.time_travel import SnapshotLibrary
    from ui.time_travel import catalog, public

    root = tmp_path / "run"
    shutil.copytree(tiny_checkpoint, root / "snapshots" / "step-00000")
    (root / "snapshots" / "step-00000" / "model.safetensors").write_bytes(b"\x00" * 64)
    (root / "snapshots" / "index.json").write_text(json.dumps({"snapshots": [{"step": 0, "path": "step-00000"}]}))
    library = SnapshotLibrary(root, 1)
    shown = catalog(library)
    assert [s["step"] for s in shown["snapshots"]] == [0] and str(tmp_path) not in str(shown)
    with pytest.raises(Exception) as caught:
        library.translator(library.snapshots()[0])
    message = public(str(caught.value), library.root)
    assert "not a readable safetensors file" in message and str(tmp_path) not in message
