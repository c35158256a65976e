"""Checks made before the first step: the saved state belongs to this run, the output folder may
be written, and every location is writable. Each refusal says what to do instead."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from model.checkpoint.files import check_writable, is_tracked_by_git

from .checkpointing import read_state_meta
from .settings import fingerprint


class RunError(RuntimeError):
    """A run that must not start as asked; the message says why and what to do."""


def run_identity(output: Path, identity: dict, data: dict) -> dict:
    """What makes a run this run: its output folder, its defining settings, its training data."""
    return {"output": str(Path(output).expanduser().resolve()), "settings": identity, "data": data}


def check_state_belongs(state_path: Path, run_id: dict) -> dict | None:
    """The saved state's metadata if it belongs to this run, None if there is none; else RunError."""
    if not state_path.exists():
        return None
    meta = read_state_meta(state_path)
    recorded = meta.get("run")
    if recorded is None:  # states written before runs were fingerprinted: settings only
        old = meta.get("settings", {})
        changed = {k: (v, run_id["settings"].get(k)) for k, v in old.items() if run_id["settings"].get(k) != v}
        if changed:
            raise RunError(_foreign(state_path, [_settings_change(changed)]))
        print(
            f"WARNING: {state_path} records no output or data fingerprint (an older state); resuming it "
            "because its settings match",
            file=sys.stderr,
        )
        return meta
    problems = []
    if recorded.get("output") != run_id["output"]:
        problems.append(f"its output was {recorded.get('output')}, not {run_id['output']}")
    theirs = recorded.get("settings", {})
    changed = {k: (theirs.get(k), v) for k, v in run_id["settings"].items() if theirs.get(k) != v}
    if changed:
        problems.append(_settings_change(changed))
    if recorded.get("data") != run_id["data"]:
        problems.append("it trained on other data")
    if problems:
        raise RunError(_foreign(state_path, problems))
    return meta


def _settings_change(changed: dict) -> str:
    return "other settings: " + ", ".join(f"{k} {old!r} (now {new!r})" for k, (old, new) in changed.items())


def _foreign(state_path: Path, problems: list[str]) -> str:
    return (
        f"{state_path} belongs to another run ({'; '.join(problems)}). Use another --work-dir, "
        f"the same flags as that run, or delete {state_path.parent} to start over"
    )


def check_output(output: Path, run_id: dict | None, overwrite: bool) -> None:
    """Refuse to replace a git-tracked folder, or an existing one another run wrote, without --overwrite.

    With run_id None only what needs no run identity is checked (before the data is read)."""
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise RunError(f"--output {output} is a file, not a folder")
    if overwrite:
        return
    if is_tracked_by_git(output):
        raise RunError(
            f"--output {output} is tracked by git (a shipped checkpoint?); choose another folder, "
            "or pass --overwrite to replace it"
        )
    if run_id is not None and output.is_dir() and any(output.iterdir()) and written_by(output) != fingerprint(run_id):
        raise RunError(
            f"--output {output} already exists and was not written by this run; choose another "
            "folder, or pass --overwrite to replace it"
        )


def written_by(output: Path) -> str | None:
    """The run fingerprint recorded in an output folder's results.json, if any."""
    try:
        return json.loads((Path(output) / "results.json").read_text(encoding="utf-8")).get("run_fingerprint")
    except (OSError, ValueError, AttributeError):
        return None


def check_locations(work_dir: Path, output: Path) -> None:
    """Every folder the run writes to, probed now rather than discovered at the end. The work folder may not
    lie inside the output folder (nor hold it): the output is replaced at the end, and the state with it."""
    work, out = Path(work_dir).expanduser().resolve(), Path(output).expanduser().resolve()
    if work == out or out in work.parents or work in out.parents:
        raise RunError(
            f"--work-dir {work_dir} and --output {output} overlap: the output folder is replaced when the "
            "run finishes, so keep the work folder (training state, checkpoints) outside it"
        )
    for folder, flag in (
        (work_dir, "--work-dir"),
        (Path(output).expanduser().resolve().parent, "the parent of --output"),
    ):
        try:
            check_writable(folder, flag)
        except OSError as err:
            raise RunError(str(err)) from None
    if Path(output).is_dir():
        try:
            check_writable(Path(output), "--output")
        except OSError as err:
            raise RunError(str(err)) from None
