"""German typed without umlauts, measured: the everyday dev set (Ding) translated through the router as written, with
its umlauts and ß written the plain way (ä -> a, ß -> ss) and read as typed, and the same restored
(training_data/umlauts.py); chrF of each, and how many words restoration changes in the dev set as written (it
should change none).

    python recipes/umlauts.py [--ding-dir runs/corpora/ding] [--beams 1]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import data
from training.evaluation import bleu_chrf
from training_data.umlauts import PLAIN
from ui.routed import RoutedTranslator

ROOT = Path(__file__).resolve().parents[1]


def stripped(text: str) -> str:
    """Umlauts and ß written the plain way, capitals kept: 'Straße für Ärzte' -> 'Strasse fur Arzte'."""
    return text.translate(PLAIN).translate(str.maketrans({"Ä": "A", "Ö": "O", "Ü": "U"}))


def translated(both: RoutedTranslator, texts: list[str], beams: int) -> list[str]:
    out = both.translate(texts, num_beams=beams)
    return [out] if isinstance(out, str) else out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ding-dir")
    parser.add_argument("--beams", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        dev = data.load_split(data.find_ding(args.ding_dir), "dev")
    except data.CorpusError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    both = RoutedTranslator.from_pretrained(ROOT / "checkpoints" / "de-en", ROOT / "checkpoints" / "de-en-everyday")
    plain_texts = [stripped(s) for s in dev.src]
    restoring = both.router
    both.router = replace(restoring, umlauts=None)  # the text read as typed
    as_typed = translated(both, plain_texts, args.beams)
    both.router = restoring
    figures = {
        "sentences": len(dev.src),
        "sentences_with_umlauts": sum(s != p for s, p in zip(dev.src, plain_texts)),
        "written": bleu_chrf(translated(both, dev.src, args.beams), dev.tgt)["chrf"],
        "stripped_read_as_typed": bleu_chrf(as_typed, dev.tgt)["chrf"],
        "stripped_restored": bleu_chrf(translated(both, plain_texts, args.beams), dev.tgt)["chrf"],
        "words_restored_in_stripped": sum(len(restoring.umlauts.restore(p)[1]) for p in plain_texts),
        "words_changed_in_written": sum(len(restoring.umlauts.restore(s)[1]) for s in dev.src),
        "sentences_restored_exactly": sum(restoring.umlauts.restore(p)[0] == s for s, p in zip(dev.src, plain_texts)),
    }
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
