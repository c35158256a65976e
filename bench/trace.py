"""Cost of a decoding trace against explain(), and the size of its JSON; medians, one thread.

    python bench/trace.py [--repeats 9] [--checkpoint checkpoints/de-en] [--data-dir DIR]

Takes the first Multi30k val sentence of 15 words (the corpus found as the tests find it:
--data-dir, $MULTI30K_DIR, else ../shared/data/multi30k; never downloaded), traces it with beam 4
and top-k 10, and times that against `Translator.explain` with the same beam, interleaved.
Targets (issue 10): trace at most 1.5x explain; JSON at most 500 KB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from timing import corpus_dir  # noqa: E402

from lens.maps import explain  # noqa: E402
from lens.trace import trace  # noqa: E402
from translation import Translator  # noqa: E402


def val_sentence(folder: Path, words: int) -> str:
    path = folder / "val.de.gz"
    lines = gzip.open(path, "rt", encoding="utf-8") if path.exists() else open(folder / "val.de", encoding="utf-8")
    with lines:
        for line in lines:
            if len(line.split()) == words:
                return line.strip()
    raise SystemExit(f"no val sentence of {words} words in {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    folder = corpus_dir(args.data_dir)
    if folder is None:
        raise SystemExit("Multi30k not found: set MULTI30K_DIR or pass --data-dir")
    torch.set_num_threads(1)
    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    text = val_sentence(folder, 15)
    candidates = {
        "explain": lambda: explain(translator, text, num_beams=4),
        "trace": lambda: trace(translator, text, num_beams=4, top_k=10),
    }
    times = {name: [] for name in candidates}
    for fn in candidates.values():
        fn()  # warm-up
    for _ in range(args.repeats):
        for name, fn in candidates.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    t = {name: statistics.median(v) for name, v in times.items()}
    result = trace(translator, text, num_beams=4, top_k=10)
    size = len(json.dumps(result.to_dict()).encode("utf-8"))
    print(f"sentence ({len(text.split())} words): {text}")
    print(f"translation: {result.translation}  ({len(result.steps)} steps, {len(result.beam)} beam nodes)")
    print(
        f"explain {t['explain'] * 1000:.1f} ms, trace (beam 4, top-k 10) {t['trace'] * 1000:.1f} ms "
        f"-> {t['trace'] / t['explain']:.2f}x (target <= 1.5x)"
    )
    print(f"trace JSON: {size / 1000:.1f} KB (target <= 500 KB)")


if __name__ == "__main__":
    main()
