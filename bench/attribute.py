"""Head-lab speed on a 15-word val sentence, medians, measured side by side in one process.

    python bench/attribute.py [--checkpoint checkpoints/de-en] [--data-dir DIR] [--repeats 7] [--threads 2]

1. attribute(): beam-4 translation, then integrated gradients (32 steps) for every target token,
   encoder rollout and agreement; also integrated gradients alone and input x gradient alone.
   Target: at most 2 s on 2 CPU cores.
2. A re-translation with one head switched off against a plain translation (beam 4), interleaved.
   Target: at most 1.2x.
The sentence is the first of Multi30k val with exactly 15 words.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import data  # noqa: E402
from lens.attribute import attribute, attribute_ids, translate_ids  # noqa: E402
from translation import Translator  # noqa: E402


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved(fns: dict, repeats: int) -> dict:
    """Median seconds of each function, run in turn so that machine load falls on all alike."""
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="checkpoints/de-en")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    val = data.load_split(data.resolve_data_dir(args.data_dir), "val")
    text = next(s for s in val.src if len(s.split()) == 15)
    src_ids, _ = translator.encode_source(text)
    tgt_ids = translate_ids(translator, src_ids, num_beams=4)
    print(
        f"sentence: {text!r} ({len(src_ids)} source tokens, {len(tgt_ids)} target tokens), "
        f"{args.threads} threads, medians of {args.repeats}"
    )
    attribute(translator, text)  # warm-up
    results = {
        "attribute (beam 4 + IG 32 + rollout + agreement)": median_seconds(
            lambda: attribute(translator, text), args.repeats
        ),
        "integrated gradients alone (32 steps)": median_seconds(
            lambda: attribute_ids(translator.model, src_ids, tgt_ids, "integrated_gradients", 32), args.repeats
        ),
        "input x gradient alone": median_seconds(
            lambda: attribute_ids(translator.model, src_ids, tgt_ids, "input_x_gradient"), args.repeats
        ),
    }
    for name, seconds in results.items():
        print(f"{name}: {seconds:.3f} s")

    from model.heads import HeadMask

    mask = HeadMask.all_on(translator.config).switched_off("cross", 1, 0)
    translate = interleaved(
        {
            "plain": lambda: translator.translate(text, num_beams=4),
            "one head off": lambda: translator.translate(text, num_beams=4, head_mask=mask),
        },
        max(args.repeats, 11),
    )
    ratio = translate["one head off"] / translate["plain"]
    print(
        f"translation, beam 4: plain {translate['plain'] * 1000:.1f} ms, one head off "
        f"{translate['one head off'] * 1000:.1f} ms: {ratio:.2f}x"
    )
    results.update({f"translate {name}": seconds for name, seconds in translate.items()})
    results["ablation ratio"] = ratio
    return results


if __name__ == "__main__":
    main()
