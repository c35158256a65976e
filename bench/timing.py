"""What the decoding benchmarks share: where the corpus is, and timing candidates in turns.

Imported by bench/decode.py, bench/versus_ct2.py, recipes/levers.py and bench/trace.py, so that none of
them imports another benchmark (they once imported each other).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "multi30k"


def corpus_dir(data_dir: str | None = None) -> Path | None:
    """Multi30k as the tests find it (tests/corpus.py): the folder given, else $MULTI30K_DIR, else
    ../shared/data/multi30k beside the checkout; None when it is not there. Never downloads."""
    folder = Path(data_dir or os.environ.get("MULTI30K_DIR") or DEFAULT_CORPUS)
    has_val = any((folder / name).is_file() for name in ("val.de.gz", "val.de"))
    return folder if has_val else None


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(candidates: dict, repeats: int) -> dict[str, float]:
    """Median seconds of each candidate, run in turns so that machine noise hits all alike."""
    times = {name: [] for name in candidates}
    for fn in candidates.values():
        fn()  # warm-up
    for _ in range(repeats):
        for name, fn in candidates.items():
            times[name].append(timed(fn))
    return {name: statistics.median(values) for name, values in times.items()}
