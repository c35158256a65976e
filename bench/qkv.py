"""How long the inside views' work takes beside /explain's, side by side in one run (in-process, one thread).

    python bench/qkv.py [--checkpoint checkpoints/de-en] [--repeats 7]

/qkv and /logit_lens translate the sentence (as /explain does), then replay the teacher-forced pass:
/qkv up to the chosen layer, opening one row (target for a 15-word sentence: 100 ms); /logit_lens
through every decoder sublayer, projecting each onto the vocabulary (target: 1.3x /explain).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lens.explain import DecodingOptions, explain_batch  # noqa: E402
from lens.logit_lens import logit_lens  # noqa: E402
from lens.qkv import qkv  # noqa: E402
from model import Translator  # noqa: E402

SENTENCE = "Ein Mann mit einem roten Hut fährt mit seinem Fahrrad durch die Straßen einer kleinen Stadt am Meer."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    translator = Translator.from_pretrained(args.checkpoint)
    print(f"{len(SENTENCE.split())} words; medians of {args.repeats}, interleaved")
    for options in (DecodingOptions(), DecodingOptions(num_beams=1)):
        explain_batch(translator, [SENTENCE], options), qkv(translator, SENTENCE, "cross", 3, 1, 3, options)  # warm-up
        times = {"explain": [], "qkv": [], "logit_lens": []}
        for _ in range(args.repeats):
            for name, run in (("explain", lambda: explain_batch(translator, [SENTENCE], options)),
                              ("qkv", lambda: qkv(translator, SENTENCE, "cross", 3, 1, 3, options)),
                              ("logit_lens", lambda: logit_lens(translator, SENTENCE, options))):
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
        print(f"beams {options.num_beams}: explain {ms['explain']:.0f} ms, qkv {ms['qkv']:.0f} ms "
              f"({ms['qkv'] / ms['explain']:.2f}x), logit_lens {ms['logit_lens']:.0f} ms "
              f"({ms['logit_lens'] / ms['explain']:.2f}x)")


if __name__ == "__main__":
    main()
