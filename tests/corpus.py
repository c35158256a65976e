"""Where the tests find Multi30k: as the benchmarks do (data.find_corpus), $MULTI30K_DIR, else
../shared/data/multi30k beside the checkout."""

import os
from pathlib import Path

import pytest

import data

DATA_DIR = Path(os.environ.get(data.DATA_DIR_ENV) or data.SHARED_CORPUS)
HAS_CORPUS = (DATA_DIR / "train.de.gz").is_file() or (DATA_DIR / "train.de").is_file()
needs_corpus = pytest.mark.skipif(
    not HAS_CORPUS, reason=f"Multi30k not found in {DATA_DIR}: set MULTI30K_DIR to a folder with train/val/test files"
)


def tiny_run(output: Path, work_dir: Path, steps: int, eval_every: int, snapshot_steps: str, *extra: str) -> list[str]:
    """train.py's arguments for a run of a tiny model on 200 Multi30k pairs (seconds on one core)."""
    return [
        "--data-dir",
        str(DATA_DIR),
        "--output",
        str(output),
        "--work-dir",
        str(work_dir),
        "--max-train-pairs",
        "200",
        "--max-steps",
        str(steps),
        "--eval-every",
        str(eval_every),
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
        "--length-penalties",
        "1.0",
        "--threads",
        "1",
        "--snapshot-steps",
        snapshot_steps,
        *extra,
    ]
