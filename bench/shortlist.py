"""The vocabulary shortlist (generation/shortlist.py) against the full output layer, side by side in one run.

    python -m training.shortlist --checkpoint checkpoints/de-en --data-dir ../shared/data/multi30k   # once
    python bench/shortlist.py [--sentences 1014] [--repeats 3]

Rows, on Multi30k val with the shipped checkpoint, one thread: outputs identical to the full output
layer's (beam 4), val BLEU both ways, candidates per sentence, and time: greedy batch 1 and beam 4 in
batches of 64 (interleaved medians).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import sacrebleu
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from timing import interleaved  # noqa: E402

import data  # noqa: E402
from translation import Translator  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--sentences", type=int, default=1014)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    val = data.load_split(data.find_corpus(args.data_dir), "val")
    src, ref = val.src[: args.sentences], val.tgt[: args.sentences]
    full = Translator.from_pretrained(args.checkpoint, device="cpu")
    short = Translator.from_pretrained(args.checkpoint, device="cpu")
    shortlist = short.load_shortlist(args.checkpoint)
    sizes = [len(shortlist.candidates([full.encode_source(s)[0]], [full.config.eos_id])) for s in src[:200]]
    a, b = full.translate(src, num_beams=4), short.translate(src, num_beams=4)
    same = sum(x == y for x, y in zip(a, b))
    print(
        f"{len(src)} val sentences, beam 4: identical {same}/{len(src)}; BLEU full {sacrebleu.corpus_bleu(a, [ref]).score:.2f}, "
        f"shortlist {sacrebleu.corpus_bleu(b, [ref]).score:.2f}; candidates per sentence: median "
        f"{statistics.median(sizes):.0f} of {full.config.vocab_size}",
        flush=True,
    )
    few, batch = src[:30], src[:128]
    t = interleaved(
        {
            "greedy full": lambda: [full.translate(s, num_beams=1) for s in few],
            "greedy shortlist": lambda: [short.translate(s, num_beams=1) for s in few],
            "beam full": lambda: full.translate(batch, num_beams=4, batch_size=64),
            "beam shortlist": lambda: short.translate(batch, num_beams=4, batch_size=64),
        },
        args.repeats,
    )
    print(
        f"greedy batch 1: full {t['greedy full'] / 30 * 1000:.1f}, shortlist {t['greedy shortlist'] / 30 * 1000:.1f} "
        f"ms/sentence ({t['greedy full'] / t['greedy shortlist']:.2f}x); beam 4 x 64: full {128 / t['beam full']:.1f}, "
        f"shortlist {128 / t['beam shortlist']:.1f} sentences/s ({t['beam full'] / t['beam shortlist']:.2f}x)"
    )


if __name__ == "__main__":
    main()
