"""The repetition rule chosen on the dev sets: BLEU, chrF and the share of outputs that repeat a word 3-gram,
on Multi30k val and the Ding dev set, for each no_repeat_ngram asked (beam 5, the checkpoint's own length
penalty from its results.json).

    python recipes/repetition.py checkpoints/de-en-everyday --values 0,3,4
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from translation import Translator  # noqa: E402


def repeats_a_trigram(text: str) -> bool:
    words = text.lower().split()
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    return len(grams) != len(set(grams))


def main() -> int:
    import sacrebleu
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--values", default="0,3,4", help="the no_repeat_ngram values to score")
    parser.add_argument("--data-dir")
    parser.add_argument("--ding-dir")
    args = parser.parse_args()
    torch.set_num_threads(1)
    sets = {
        "val": data.load_split(data.resolve_data_dir(args.data_dir), "val"),
        "ding-dev": data.load_split(data.find_ding(args.ding_dir), "dev"),
    }
    results = json.loads((Path(args.checkpoint) / "results.json").read_text(encoding="utf-8"))["results"]
    penalty = results["decoding"]["length_penalty"]
    translator = Translator.from_pretrained(args.checkpoint)
    for n in (int(v) for v in args.values.split(",")):
        translator.no_repeat_ngram = n
        for name, corpus in sets.items():
            start = time.time()
            hyp = translator.translate(corpus.src, num_beams=5, length_penalty=penalty)
            share = sum(map(repeats_a_trigram, hyp)) / len(hyp)
            print(
                f"no_repeat_ngram {n} {name}: BLEU {sacrebleu.corpus_bleu(hyp, [corpus.tgt]).score:.2f} "
                f"chrF {sacrebleu.corpus_chrf(hyp, [corpus.tgt]).score:.2f} repeat {100 * share:.1f}% "
                f"({time.time() - start:.0f} s)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
