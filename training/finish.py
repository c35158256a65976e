"""The end of a run: pick the final weights, score them, write the output folder in one piece
(model, tokenizer, card, results, curves, snapshots), and push it."""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from pathlib import Path

import torch

from model import Transformer
from model.checkpoint.files import copy_file, replace_folder, write_text
from translation.snapshots import FOLDER as SNAPSHOTS

from .metrics import read_jsonl, tokens_per_second
from .run import RunFiles, RunState
from .settings import TrainSettings
from .snapshots import push_folder
from .tasks import Task, weight_candidates


def training_record(progress: RunState, steps_per_epoch: int, metrics_path: Path, command: str, hardware: str) -> dict:
    """How the run went, for results.json and the card."""
    rate = tokens_per_second(progress.tokens, progress.wall_time)
    if not progress.tokens:  # states saved before tokens were counted: the logged rates
        rates = [r["tokens_per_s"] for r in read_jsonl(metrics_path) if r.get("tokens_per_s")]
        rate = round(sum(rates) / len(rates), 1) if rates else 0.0
    return {
        "command": command,
        "hardware": hardware,
        "steps": progress.step,
        "epochs": round(progress.step / steps_per_epoch, 2),
        "wall_time_s": round(progress.wall_time, 1),
        "tokens_per_s": rate,
    }


def started_from(folder: str | None) -> dict | None:
    """The checkpoint a fine-tuning run started from, and how that one was trained (its own record)."""
    if not folder:
        return None
    path = Path(folder) / "results.json"
    parent = json.loads(path.read_text()).get("training", {}) if path.is_file() else {}
    keep = ("command", "steps", "epochs", "wall_time_s", "started_from")
    return {"folder": str(folder), **{k: parent[k] for k in keep if k in parent}}


def finish_run(
    model: Transformer,
    task: Task,
    files: RunFiles,
    settings: TrainSettings,
    progress: RunState,
    run_fingerprint: str,
    device: torch.device,
    hardware: str,
    command: str,
) -> dict:
    """Write the output folder (replacing it only once complete) and push it; returns results.json's content."""
    model.eval()
    candidates = weight_candidates(model, files.best, [files.checkpoint(s) for s in progress.saved_steps])
    choice, results, extra = task.final_results(model, device, candidates)
    training = training_record(progress, task.steps_per_epoch(), files.metrics, command, hardware)
    training.update(weights=choice, averaged=choice == "average")
    if settings.init_from:
        training["started_from"] = started_from(settings.init_from)
    snapshots = [
        {k: s.get(k) for k in ("step", "revision", "path", "val_loss", "val_bleu")} for s in progress.snapshots
    ]
    info = {
        "results": results,
        "training": training,
        "settings": settings.recorded(),
        "data": task.data_info(),
        "snapshots": snapshots,
        "repo_id": settings.push_to_hub,
        "run_fingerprint": run_fingerprint,
    }
    output = Path(settings.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    staging = output.with_name(f".{output.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        task.save(model, staging, info)
        write_text(staging / "results.json", json.dumps(info, indent=2) + "\n")
        for name, text in extra.items():
            write_text(staging / name, text)
        for path in (files.metrics, files.curves):
            if path.exists():
                copy_file(path, staging / path.name)
        if files.snapshots.is_dir():
            shutil.copytree(files.snapshots, staging / SNAPSHOTS)
        replace_folder(staging, output)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(json.dumps(results, indent=2))
    print(f"wrote {output}", file=sys.stderr)
    if settings.push_to_hub:
        score = results.get("test", {}).get("bleu")
        message = f"Train {progress.step} steps" + (f": test BLEU {score:.2f}" if score is not None else "")
        url = push_folder(output, settings.push_to_hub, settings.hub_branch, message, ignore=["snapshots/step-*"])
        print(f"pushed to {url}", file=sys.stderr)
    return info
