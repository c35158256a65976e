"""How long the inside views' work takes beside /explain's, side by side in one run (in-process, one thread).

    python bench/inside.py [--checkpoint checkpoints/de-en] [--repeats 7]

Each view translates the sentence (as /explain does), then replays the model: /qkv up to the chosen
layer, opening one row (target for a 15-word sentence: 100 ms); /logit_lens through every decoder
sublayer, projecting each onto the vocabulary (target: 1.3x /explain); /contributions decomposing
every attention block (target: 2x /explain); /contrast with 256 integrated-gradient steps (2.5 s);
/patch with every head and every encoder vector patched (3 s).
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

from lens.contrast import contrast  # noqa: E402
from lens.contributions import contributions  # noqa: E402
from lens.explain import DecodingOptions, explain_batch  # noqa: E402
from lens.logit_lens import logit_lens  # noqa: E402
from lens.patching import patch  # noqa: E402
from lens.qkv import qkv  # noqa: E402
from translation import Translator  # noqa: E402

SENTENCE = "Ein Mann mit einem roten Hut fährt mit seinem Fahrrad durch die Straßen einer kleinen Stadt am Meer."
CORRUPTED = "Eine Frau mit einem roten Hut fährt mit seinem Fahrrad durch die Straßen einer kleinen Stadt am Meer."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    translator = Translator.from_pretrained(args.checkpoint)
    print(f"{len(SENTENCE.split())} words; medians of {args.repeats}, interleaved")
    for options in (DecodingOptions(), DecodingOptions(num_beams=1)):
        runs = {
            "explain": lambda: explain_batch(translator, [SENTENCE], options),
            "qkv": lambda: qkv(translator, SENTENCE, "cross", 3, 1, 3, options),
            "logit_lens": lambda: logit_lens(translator, SENTENCE, options),
            "contributions": lambda: contributions(translator, SENTENCE, options),
            "contrast": lambda: contrast(translator, SENTENCE, 2, "woman", options),
            "patch": lambda: patch(translator, SENTENCE, CORRUPTED, None, options),
        }
        for run in runs.values():
            run()  # warm-up
        times = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, run in runs.items():
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
        print(
            f"beams {options.num_beams}: "
            + ", ".join(
                f"{name} {ms[name]:.0f} ms" + ("" if name == "explain" else f" ({ms[name] / ms['explain']:.2f}x)")
                for name in runs
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
