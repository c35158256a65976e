"""Write a checkpoint's evidence index (lens/evidence.py) from the corpora it was trained on.

The training script does this when it saves; for a checkpoint trained before the index existed:

    python -m training.evidence --checkpoint checkpoints/de-en [--corpus multi30k+ding]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import data
from lens.evidence import build_index, write_index

from .settings import CORPORA


def training_corpora(corpus: str, data_dir: str | None = None, ding_dir: str | None = None,
                     max_train_pairs: int | None = None, phrases: bool = False,
                     words: bool = False) -> dict[str, tuple[list[str], list[str]]]:
    """{name: (german, english)} of the training splits a run of `--corpus` reads (each pair once)."""
    multi30k = data.load_split(data.resolve_data_dir(data_dir), "train")
    n = max_train_pairs or len(multi30k)
    corpora = {"multi30k": (multi30k.src[:n], multi30k.tgt[:n])}
    if corpus == "multi30k+ding":
        ding = data.load_split(data.find_ding(ding_dir), "train")
        corpora["ding"] = (ding.src, ding.tgt)
        for split, wanted in (("phrases", phrases), ("words", words)):
            if wanted:
                extra = data.load_split(data.find_ding(ding_dir), split)
                corpora[f"ding_{split}"] = (extra.src, extra.tgt)
    return corpora


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="checkpoint folder to write evidence.json.gz into")
    parser.add_argument("--corpus", default="multi30k", choices=CORPORA)
    parser.add_argument("--data-dir")
    parser.add_argument("--ding-dir")
    parser.add_argument("--ding-phrases", action="store_true", help="the run also trained on the Ding phrase pairs")
    parser.add_argument("--ding-words", action="store_true", help="the run also trained on the Ding headwords")
    args = parser.parse_args(argv)
    if not Path(args.checkpoint).is_dir():
        print(f"error: no such folder {args.checkpoint}", file=sys.stderr)
        return 1
    try:
        path = write_index(Path(args.checkpoint), build_index(training_corpora(args.corpus, args.data_dir, args.ding_dir,
                                                                            phrases=args.ding_phrases, words=args.ding_words)))
    except data.CorpusError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
