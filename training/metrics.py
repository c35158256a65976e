"""The run's log, metrics.jsonl (one JSON record a line, appended), throughput, and the curves."""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

from matplotlib.figure import Figure

from model.checkpoint.files import atomic_path, write_text


class MetricsError(RuntimeError):
    """A metrics.jsonl that is damaged before its last line."""


def read_jsonl(path: Path, warn: bool = True) -> list[dict]:
    """All records; a torn last line (a kill mid-write) is skipped with a warning naming the file."""
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):
                if warn:
                    warnings.warn(f"{path}: the last line (line {number}) is incomplete and was skipped", stacklevel=2)
                break
            raise MetricsError(f"{path}: line {number} is not JSON; delete the line or the file to go on") from None
    return records


def append_record(path: Path, **record) -> None:
    """Append one record with the time, as a single write of a whole line."""
    record["time"] = round(time.time(), 1)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def keep_records_up_to(path: Path, step: int) -> int:
    """Drop records past `step` (written after the state a run resumes from); returns how many."""
    path = Path(path)
    if not path.exists():
        return 0
    records = read_jsonl(path)
    kept = [r for r in records if r.get("step", 0) <= step]
    write_text(path, "".join(json.dumps(r) + "\n" for r in kept))  # also drops a torn last line
    dropped = len(records) - len(kept)
    if dropped:
        print(f"{path}: dropped {dropped} record(s) past step {step}, written after the saved state", file=sys.stderr)
    return dropped


def tokens_per_second(tokens: int, seconds: float) -> float:
    return round(tokens / seconds, 1) if seconds > 0 else 0.0


def plot_curves(records: list[dict], png_path: Path) -> None:
    """Training loss and validation BLEU (or copy accuracy) against steps, written atomically."""
    train = [(r["step"], r["loss"]) for r in records if "loss" in r]
    val = [
        (r["step"], r.get("val_bleu", r.get("copy_accuracy")))
        for r in records
        if "val_bleu" in r or "copy_accuracy" in r
    ]
    fig = Figure(figsize=(10, 3.5))  # no pyplot: no global backend, no window
    ax1, ax2 = fig.subplots(1, 2)
    if train:
        ax1.plot(*zip(*train))
    ax1.set(xlabel="step", ylabel="training loss (label-smoothed)", title="Loss")
    if val:
        ax2.plot(*zip(*val), marker="o")
    ax2.set(
        xlabel="step",
        ylabel="validation BLEU" if any("val_bleu" in r for r in records) else "copy accuracy",
        title="Validation",
    )
    fig.tight_layout()
    with atomic_path(Path(png_path)) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
