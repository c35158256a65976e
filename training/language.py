"""Write the table that tells German from English (training_data/language.py) from the two sides of the training pairs.

    python -m training.language --checkpoint checkpoints/de-en [--data-dir DIR] [--ding-dir DIR] [--kept N]

German is the German side of Multi30k's and Ding's training splits, English their English side; no dev or test
sentence is read. About 2 seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import data
from training_data.language import KEPT_WORDS, build_counts, read_language, write_counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="the folder that gets language.json.gz")
    parser.add_argument("--data-dir", help="Multi30k (else $MULTI30K_DIR)")
    parser.add_argument("--ding-dir", help="the Ding splits (else $DING_DIR, else runs/corpora/ding)")
    parser.add_argument("--kept", type=int, default=KEPT_WORDS, help="words kept per language")
    args = parser.parse_args(argv)
    if not Path(args.checkpoint).is_dir():
        raise SystemExit(f"no such checkpoint folder: {args.checkpoint}")
    try:
        corpora = [
            data.load_split(data.resolve_data_dir(args.data_dir), "train"),
            data.load_split(data.find_ding(args.ding_dir), "train"),
        ]
    except data.CorpusError as err:
        raise SystemExit(str(err)) from None
    german = [s for corpus in corpora for s in corpus.src]
    english = [s for corpus in corpora for s in corpus.tgt]
    path = write_counts(args.checkpoint, build_counts(german, english, args.kept))
    check = read_language(path)
    print(
        f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB): {len(check.ratios):,} words from "
        f"{len(german):,} German and {len(english):,} English sentences"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
