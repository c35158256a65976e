"""What ui/gpu_time.py's sizing asks ZeroGPU for, against what the work takes on this machine's CPU.

For Multi30k val sentences: the seconds Translator.translate takes here, greedy and with 4 beams, per
character of German and beam (SECONDS_PER_UNIT is set above it), and the seconds a GpuTime with a 30-second
cap declares for the same request, against the fixed 30 s declared before.

    python bench/gpu_time.py [--checkpoint checkpoints/de-en] [--sentences 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from data import find_corpus, load_split  # noqa: E402
from lens.explain import DecodingOptions  # noqa: E402
from translation import Translator  # noqa: E402
from ui.gpu_time import SECONDS_PER_UNIT, START_SECONDS, GpuTime  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoints/de-en")
    parser.add_argument("--sentences", type=int, default=40)
    args = parser.parse_args()
    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    german = load_split(find_corpus(None), "val").src[: args.sentences]
    declared = GpuTime(cap=30)
    print(f"START_SECONDS {START_SECONDS}, SECONDS_PER_UNIT {SECONDS_PER_UNIT}")
    for beams in (1, 4):
        per_unit, asked = [], []
        translator.translate(german[0], num_beams=beams)
        for sentence in german:
            start = time.perf_counter()
            translator.translate(sentence, num_beams=beams)
            per_unit.append((time.perf_counter() - start) / (len(sentence) * beams))
            asked.append(declared(sentence, DecodingOptions(num_beams=beams)))
        print(
            f"beams {beams}: {statistics.median(per_unit) * 1e3:.2f} ms per character and beam here "
            f"(slowest {max(per_unit) * 1e3:.2f}); declared {statistics.median(asked)} s median, "
            f"{max(asked)} s at most, against 30 s fixed"
        )


if __name__ == "__main__":
    main()
