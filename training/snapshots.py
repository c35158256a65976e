"""Snapshots: the weights at chosen steps of a run, each a loadable fp16 checkpoint folder
`snapshots/step-NNNNN/` with its val figures in `snapshots/index.json`; on the Hub, branch
`step-NNNNN` of the model repo (main holds the final model). The layout is translation/snapshots.py's, which reads them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from huggingface_hub import HfApi

from model import Transformer
from model.checkpoint.files import replace_folder, write_text
from translation.snapshots import INDEX_FILE, revision_name

from .tasks import Task, half_copy


def take_snapshot(model: Transformer, task: Task, root: Path, step: int, metrics: dict, card_info: dict) -> dict:
    """Write the fp16 checkpoint of `model` at `step` under `root`; return its index entry."""
    entry = {
        "step": step,
        "revision": revision_name(step),
        "path": revision_name(step),
        "val_loss": metrics.get("val_loss"),
        "val_bleu": metrics.get("val_bleu"),
    }
    entry.update({k: v for k, v in metrics.items() if k not in entry})
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{revision_name(step)}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    task.save(half_copy(model), tmp, {**card_info, "snapshot": entry})
    replace_folder(tmp, root / revision_name(step))
    return entry


def write_index(root: Path, entries: list[dict]) -> None:
    """index.json lists the snapshots taken, by step; folders of steps not listed are removed."""
    root.mkdir(parents=True, exist_ok=True)
    entries = sorted(entries, key=lambda e: e["step"])
    keep = {e["path"] for e in entries}
    for folder in root.glob("step-*"):
        if folder.name not in keep:  # taken after the state a resumed run went back to
            shutil.rmtree(folder, ignore_errors=True)
    write_text(root / INDEX_FILE, json.dumps({"snapshots": entries}, indent=2) + "\n")


def push_folder(folder: Path, repo_id: str, branch: str | None, message: str, ignore: list[str] | None = None) -> str:
    """Upload a checkpoint folder as one commit to `branch` (created from main if needed)."""
    api = HfApi()
    repo_id = api.create_repo(repo_id=repo_id, exist_ok=True).repo_id
    if branch is not None:
        api.create_branch(repo_id=repo_id, branch=branch, exist_ok=True)
    return str(
        api.upload_folder(
            repo_id=repo_id, folder_path=folder, revision=branch, commit_message=message, ignore_patterns=ignore
        )
    )
