"""A run trained with a domain tag on the captions (train.py --caption-tag), scored with and without the tag.

    python recipes/tag_scores.py runs/everyday/caption-tag/checkpoint [--tag "<CAP>"] [--test]

Four ways to give the German: never tagged, always tagged, and tagged where the domain guess of the captions
model (training_data/domain.py, checkpoints/de-en/domain.json.gz) says the sentence reads like a caption, the way a
translator would use it. Beam 5, length penalty 1.4, no trigram twice (the shipped everyday decoding), on
Multi30k val and the everyday dev set; `--test` scores the two test sets too (once, for a final report).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from training_data.domain import load_domain  # noqa: E402
from translation import Translator  # noqa: E402


def with_tag(sentences: list[str], tag: str, wanted: list[bool]) -> list[str]:
    """Each sentence, with `tag` in front where `wanted` says so."""
    if len(sentences) != len(wanted):
        raise ValueError(f"{len(sentences)} sentences and {len(wanted)} choices")
    return [f"{tag} {s}" if w else s for s, w in zip(sentences, wanted)]


def main() -> int:
    import sacrebleu

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--tag", default="<CAP>")
    parser.add_argument(
        "--domain", default=str(ROOT / "checkpoints" / "de-en"), help="the checkpoint whose domain guess tags"
    )
    parser.add_argument("--test", action="store_true", help="score test2016 and the Ding test set too (once)")
    args = parser.parse_args()
    multi30k, ding = data.resolve_data_dir(None), data.find_ding(None)
    sets = {"val": data.load_split(multi30k, "val"), "ding-dev": data.load_split(ding, "dev")}
    if args.test:
        sets.update(
            {"test2016": data.load_split(multi30k, "test_2016_flickr"), "ding-test": data.load_split(ding, "test")}
        )
    translator, domain = Translator.from_pretrained(args.checkpoint, device="cpu"), load_domain(args.domain)
    if domain is None:
        raise SystemExit(f"{args.domain} has no domain.json.gz (python -m training.domain)")
    translator.no_repeat_ngram = 3
    report = {}
    for name, corpus in sets.items():
        caption = [not domain.everyday(s) for s in corpus.src]
        ways = {"untagged": [False] * len(caption), "tagged": [True] * len(caption), "tagged_by_domain": caption}
        row = {"tagged_by_domain_share": round(sum(caption) / len(caption), 4)}
        for way, wanted in ways.items():
            hyp = translator.translate(with_tag(corpus.src, args.tag, wanted), num_beams=5, length_penalty=1.4)
            row[way] = {
                "bleu": round(sacrebleu.corpus_bleu(hyp, [corpus.tgt]).score, 2),
                "chrf": round(sacrebleu.corpus_chrf(hyp, [corpus.tgt]).score, 2),
            }
        report[name] = row
        print(name, json.dumps(row), flush=True)
    for sentence in ("Ich möchte ein Bier.", "Wo ist der Bahnhof?", "Ein Mann fährt Fahrrad."):
        tagged = with_tag([sentence], args.tag, [not domain.everyday(sentence)])
        print(sentence, "->", translator.translate(tagged, num_beams=5, length_penalty=1.4)[0])
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
