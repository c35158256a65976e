"""Write the table that guesses which kind of German a text is (training_data/domain.py) from the training sentences.

    python -m training.domain --checkpoint checkpoints/de-en [--data-dir DIR] [--ding-dir DIR]

The captions are the German of Multi30k's training split, the everyday sentences that of the Ding training
split (python -m corpora.everyday_corpus); no dev or test sentence is read. About 2 seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import data
from training_data.domain import build_counts, read_domain, write_counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="the folder that gets domain.json.gz")
    parser.add_argument("--data-dir", help="Multi30k (else $MULTI30K_DIR)")
    parser.add_argument("--ding-dir", help="the Ding splits (else $DING_DIR, else runs/corpora/ding)")
    args = parser.parse_args(argv)
    if not Path(args.checkpoint).is_dir():
        raise SystemExit(f"no such checkpoint folder: {args.checkpoint}")
    try:
        captions = data.load_split(data.resolve_data_dir(args.data_dir), "train").src
        everyday = data.load_split(data.find_ding(args.ding_dir), "train").src
    except data.CorpusError as err:
        raise SystemExit(str(err)) from None
    path = write_counts(args.checkpoint, build_counts(captions, everyday))
    guess = read_domain(path)
    print(
        f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB): {len(guess.ratios):,} features from "
        f"{len(captions):,} captions and {len(everyday):,} everyday sentences"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
