"""The snapshots of a training run: list them, load one. From a local checkpoint folder
(`<folder>/snapshots/index.json`) or a Hub repo (branches `step-NNNNN`, read from the Hub's refs,
or offline from the Hugging Face cache)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi, constants, hf_hub_download
from huggingface_hub.errors import (
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
)

from model.checkpoint.hub import CheckpointError, resolve_file
from model.checkpoint.json_file import read_json
from model.checkpoint.weights import read_header
from tokenizer import fingerprint, load_tokenizer
from translation import Translator

# The layout, defined here once; training/snapshots.py writes it, this module reads it.
FOLDER = "snapshots"  # in a checkpoint folder (and in its Hub repo's main branch)
INDEX_FILE = "index.json"  # in FOLDER: {"snapshots": [{"step", "path", "revision", val figures}, ...]}
INDEX = f"{FOLDER}/{INDEX_FILE}"
MAX_INDEX_BYTES, MAX_INDEX_DEPTH = 1 << 20, 6  # the shipped index: 1.6 kB, 3 deep (the file, its list, an entry)
BRANCH = re.compile(r"^step-(\d+)$")  # a snapshot's folder in FOLDER, and its branch on the Hub


def revision_name(step: int) -> str:
    """The folder and Hub branch of the snapshot at `step` (sorts by step as text too)."""
    return f"step-{step:05d}"


@dataclass(frozen=True)
class Snapshot:
    """One snapshot: a Hub revision (branch) or a local folder, and its val figures when recorded."""

    step: int
    revision: str | None = None  # Hub branch, e.g. "step-00500"
    path: str | None = None  # local checkpoint folder
    val_loss: float | None = None
    val_bleu: float | None = None
    phase: str | None = None  # what the training learned then, where a run continued another (training/lineage.py)


def list_snapshots(model_id: str | Path, revision: str | None = None) -> list[Snapshot]:
    """Snapshots of a checkpoint folder or Hub repo, by step. `revision`: where the index is read (main)."""
    folder = Path(str(model_id))
    if folder.is_dir():
        return _local_snapshots(folder)
    figures = _hub_index(str(model_id), revision)
    branches = _hub_branches(str(model_id))
    if not branches:  # no refs known: trust the index
        branches = [e["revision"] for e in figures.values() if BRANCH.match(e.get("revision") or "")]  # not "main"
    snapshots = []
    for name in branches:
        found = BRANCH.match(name)
        assert found is not None  # every branch name was matched to be listed
        step = int(found.group(1))
        entry = figures.get(step, {})
        snapshots.append(
            Snapshot(
                step, revision=name, val_loss=entry.get("val_loss"), val_bleu=entry.get("val_bleu"), phase=_phase(entry)
            )
        )
    return sorted(snapshots, key=lambda s: s.step)


def load_snapshot(model_id: str | Path, snapshot: Snapshot, device: str | None = None) -> Translator:
    """The Translator of one snapshot (fp16 weights are loaded into the model's fp32 parameters), once its
    tokenizer is the one its weights record, or for weights that record none, the final model's."""
    check_snapshot_tokenizer(model_id, snapshot)
    if snapshot.path is not None:
        return Translator.from_pretrained(snapshot.path, device=device)
    return Translator.from_pretrained(str(model_id), revision=snapshot.revision, device=device)


def snapshot_file(model_id: str | Path, snapshot: Snapshot, name: str) -> Path:
    """One file of a snapshot: in its local folder, or on its Hub branch."""
    if snapshot.path is not None:
        return resolve_file(snapshot.path, name)
    return resolve_file(str(model_id), name, revision=snapshot.revision)


def check_snapshot_tokenizer(model_id: str | Path, snapshot: Snapshot) -> None:
    """Refuse a snapshot whose weights record no tokenizer fingerprint (written before they did) and whose
    tokenizer.json is not the final model's: a foreign vocabulary (two ids swapped) would translate garbage
    with weights that look fine. Weights that record one are checked by Translator.from_pretrained."""
    if read_header(snapshot_file(model_id, snapshot, "model.safetensors")).tokenizer is not None:
        return
    own_path = snapshot_file(model_id, snapshot, "tokenizer.json")
    try:
        own = fingerprint(load_tokenizer(own_path))
        final_path = resolve_file(str(model_id), "tokenizer.json")  # the final model's: the run's last point
        final = fingerprint(load_tokenizer(final_path))
    except (ValueError, OSError, CheckpointError) as err:
        raise CheckpointError(
            f"{own_path}: the snapshot's weights record no tokenizer, and it cannot be checked "
            f"against the final model's: {err}"
        ) from None
    if own != final:
        raise CheckpointError(
            f"{own_path} ({own}) is not the tokenizer of the final model {final_path} ({final}): "
            "the snapshot's weights record none, and a foreign tokenizer would translate garbage"
        )


def _local_snapshots(folder: Path) -> list[Snapshot]:
    root = folder / FOLDER
    index = root / INDEX_FILE
    if index.is_file():
        stored = read_json(index, MAX_INDEX_BYTES, MAX_INDEX_DEPTH)  # a CheckpointFileError (a ValueError) names it
        if not isinstance(stored, dict) or "snapshots" not in stored:
            raise ValueError(f"{index} is not a snapshot index (no 'snapshots' list)")
        entries = stored["snapshots"]
    else:  # folders without an index: steps from their names
        entries = [
            {"step": int(m.group(1)), "path": p.name} for p in root.glob("step-*") if (m := BRANCH.match(p.name))
        ]
    if not isinstance(entries, list):
        raise ValueError(f"{index}: 'snapshots' is not a list")
    return sorted((checked_entry(e, root, index) for e in entries), key=lambda s: s.step)


def checked_entry(entry, root: Path, index: Path) -> Snapshot:
    """One local index entry as a Snapshot: a whole step of at least 0, and a path that stays inside the run's
    checkpoint folder (".." is the final model itself); anything else is a ValueError naming the index and entry."""
    if not isinstance(entry, dict):
        raise ValueError(f"{index}: an entry is not an object: {str(entry)[:80]}")
    step, name = entry.get("step"), entry.get("path")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"{index}: an entry has no whole 'step' of at least 0: {str(entry)[:80]}")
    if not isinstance(name, str) or not name or not (root / name).resolve().is_relative_to(root.parent.resolve()):
        raise ValueError(f"{index}: the entry of step {step} has no 'path' inside {root.parent}: {name!r}")
    figures = {k: entry.get(k) if isinstance(entry.get(k), (int, float)) else None for k in ("val_loss", "val_bleu")}
    revision = entry.get("revision") if isinstance(entry.get("revision"), str) else None
    return Snapshot(step, revision=revision, path=str(root / name), phase=_phase(entry), **figures)


def _phase(entry: dict) -> str | None:
    """The part of training an index entry belongs to (training/lineage.py), where it names one."""
    return entry["phase"] if isinstance(entry.get("phase"), str) else None


def _hub_index(repo_id: str, revision: str | None) -> dict[int, dict]:
    """step -> index entry from the repo's snapshots/index.json (the cache serves it offline)."""
    try:
        path = hf_hub_download(repo_id, INDEX, revision=revision)
    except (HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled, OSError):
        return {}
    try:
        stored = read_json(path, MAX_INDEX_BYTES, MAX_INDEX_DEPTH)
        return {int(e["step"]): e for e in stored.get("snapshots", [])}
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise ValueError(f"{path} is not a snapshot index ({type(err).__name__}: {err})") from None


def _hub_branches(repo_id: str) -> list[str]:
    """Branch names step-NNNNN: from the Hub, or offline from the refs in the local cache."""
    if not constants.HF_HUB_OFFLINE:
        try:
            return [b.name for b in HfApi().list_repo_refs(repo_id).branches if BRANCH.match(b.name)]
        except (HfHubHTTPError, OSError):
            pass  # no network: what the cache knows
    refs = Path(constants.HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}" / "refs"
    if not refs.is_dir():
        return []
    return sorted(p.name for p in refs.iterdir() if BRANCH.match(p.name))
