"""Write a checkpoint's evidence index (training_data/evidence.py) from the corpora it was trained on.

The training script does this when it saves; for a checkpoint trained before the index existed:

    python -m training.evidence --checkpoint checkpoints/de-en [--corpus multi30k+ding]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import data
from training_data.evidence import build_index, write_index

from .settings import CORPORA, TrainSettings


def training_corpora(
    corpus: str,
    data_dir: str | None = None,
    ding_dir: str | None = None,
    max_train_pairs: int | None = None,
    phrases: bool = False,
    words: bool = False,
    distilled: str | None = None,
    distilled_ding: str | None = None,
    more: tuple[str, ...] = (),
    corpora_dir: str | None = None,
) -> dict[str, tuple[list[str], list[str]]]:
    """{name: (german, english)} of the training splits a run of `--corpus` reads (each pair once); with
    `distilled` (`distilled_ding`), the English of Multi30k (of the Ding sentences) is a teacher's
    translations (recipes/distill.py)."""
    if corpus == "tatoeba-zh":  # Chinese -> English: Tatoeba alone
        chinese = data.load_split(data.find_chinese(data_dir), "train", "zh")
        n = max_train_pairs or len(chinese)
        return {"tatoeba-zh": (chinese.src[:n], chinese.tgt[:n])}
    multi30k = data.load_split(data.resolve_data_dir(data_dir), "train")
    n = max_train_pairs or len(multi30k)
    english = distilled_targets(distilled, len(multi30k)) if distilled else multi30k.tgt
    corpora = {"multi30k": (multi30k.src[:n], english[:n])}
    if corpus == "multi30k+ding":
        ding = data.load_split(data.find_ding(ding_dir), "train")
        ding_english = (
            distilled_targets(distilled_ding, len(ding), "Ding training pair") if distilled_ding else ding.tgt
        )
        corpora["ding"] = (ding.src, ding_english)
        for split, wanted in (("phrases", phrases), ("words", words)):
            if wanted:
                extra = data.load_split(data.find_ding(ding_dir), split)
                corpora[f"ding_{split}"] = (extra.src, extra.tgt)
    for name in more:  # python -m corpora.parallel_text
        extra = data.load_split(data.find_more_corpus(name, corpora_dir), "train")
        corpora[name] = (extra.src, extra.tgt)
    return corpora


def distilled_targets(path: str, pairs: int, what: str = "Multi30k training pair") -> list[str]:
    """The teacher's translations, one line per training pair (`what`), in the split's order."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise data.CorpusError(f"cannot read the distilled targets {path}: {err}") from None
    empty = next((i for i, line in enumerate(lines, 1) if not line.strip()), None)
    if len(lines) != pairs or empty:
        found = f"line {empty} is empty" if len(lines) == pairs else f"not {len(lines)} lines"
        raise data.CorpusError(
            f"{path} must hold one non-empty line per {what} ({pairs}), {found}: write it again with recipes/distill.py"
        )
    return lines


def corpus_parser(description: str, writes: str) -> argparse.ArgumentParser:
    """The arguments of a command that writes one file of a checkpoint from the corpora it was trained on."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--checkpoint", required=True, help=f"checkpoint folder to write {writes} into")
    parser.add_argument("--corpus", default="multi30k", choices=CORPORA)
    parser.add_argument("--data-dir")
    parser.add_argument("--ding-dir")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = corpus_parser(__doc__.split("\n\n")[0], "evidence.json.gz")
    parser.add_argument("--ding-phrases", action="store_true", help="the run also trained on the Ding phrase pairs")
    parser.add_argument("--ding-words", action="store_true", help="the run also trained on the Ding headwords")
    parser.add_argument("--distilled-targets", help="the run read these teacher translations as Multi30k's English")
    parser.add_argument(
        "--distilled-ding", help="the run read these teacher translations as the Ding sentences' English"
    )
    parser.add_argument(
        "--more-corpora",
        default="",
        help="the run also read these corpora of python -m corpora.parallel_text "
        "or corpora.back_translation (names, or train.py's name:N list)",
    )
    parser.add_argument("--corpora-dir", help="the folder of those corpora (runs/corpora by default)")
    args = parser.parse_args(argv)
    if not Path(args.checkpoint).is_dir():
        print(f"error: no such folder {args.checkpoint}", file=sys.stderr)
        return 1
    try:
        more = tuple(TrainSettings(more_corpora=args.more_corpora).more_corpora_repeats()) if args.more_corpora else ()
        path = write_index(
            Path(args.checkpoint),
            build_index(
                training_corpora(
                    args.corpus,
                    args.data_dir,
                    args.ding_dir,
                    phrases=args.ding_phrases,
                    words=args.ding_words,
                    distilled=args.distilled_targets,
                    distilled_ding=args.distilled_ding,
                    more=more,
                    corpora_dir=args.corpora_dir,
                )
            ),
        )
    except (data.CorpusError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
