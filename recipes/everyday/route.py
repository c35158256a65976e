"""The page's translator measured on the dev sets: each sentence routed to the model that knows its kind of German
(lens/routed.Router: the language check, the truecaser, the domain guess of the default checkpoint), against the
default model alone; on the dev sets as written and lowercased (the tutorials write "ich möchte ein bier"); and the
check that tells German from text that is not German, on a set built for it.

    python recipes/everyday/route.py [--captions checkpoints/de-en] [--everyday checkpoints/de-en-everyday] [--test]

Beam 4, length penalty 1.0 (the page's defaults), each checkpoint's own no-repeat rule. Sets: Multi30k val (captions)
and the Ding dev set (everyday German); `--test` scores test2016 and the Ding test set too (once, for a final
report). The not-German set: the German of both dev sets (as written and lowercased) against English (the dev sets'
references and the sentences of this repository's docs), the Chinese and Japanese sentences of not_german.txt
beside this file, and emoji and digits. Nothing here is chosen: the router's files are read as shipped.
About 3 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from translation import Translator  # noqa: E402
from ui.routed import Router  # noqa: E402

OTHER_TEXT = Path(__file__).with_name("not_german.txt")
BEAMS, LENGTH_PENALTY = 4, 1.0


class Cached:
    """Each checkpoint's translations, each (model, sentence) translated once, in batches."""

    def __init__(self, translators: dict[str, Translator]):
        self.translators, self.done = translators, {}

    def translate(self, model: str, sentences: list[str]) -> list[str]:
        todo = list(dict.fromkeys(s for s in sentences if (model, s) not in self.done))
        for start in range(0, len(todo), 64):
            chunk = todo[start : start + 64]
            for s, out in zip(
                chunk, self.translators[model].translate(chunk, num_beams=BEAMS, length_penalty=LENGTH_PENALTY)
            ):
                self.done[(model, s)] = out
        return [self.done[(model, s)] for s in sentences]

    def routed(self, router: Router, sentences: list[str]) -> tuple[list[str], float]:
        """Each sentence by its route's model (the text as the route reads it), and the share sent to the everyday model."""
        routes = [router.route(s) for s in sentences]
        out = [""] * len(sentences)
        for model in ("default", "everyday"):
            picked = [i for i, r in enumerate(routes) if r.model == model]
            for i, english in zip(picked, self.translate(model, [routes[i].text for i in picked])):
                out[i] = english
        return out, sum(r.model == "everyday" for r in routes) / max(1, len(routes))


def scores(hypotheses: list[str], references: list[str]) -> dict:
    import sacrebleu

    return {
        "bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
        "chrf": round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2),
    }


def translation_report(cache: Cached, router: Router, sets: dict) -> dict:
    """Per set, as written and lowercased: the default model alone, the pair without recasing, the pair as the page
    runs it; and the share sent to the everyday model."""
    no_recasing = Router(router.domain, router.language, None, router.everyday)
    report = {}
    for name, corpus in sets.items():
        for case, sources in (("cased", corpus.src), ("lowercased", [s.lower() for s in corpus.src])):
            start = time.time()
            row = {"default_alone": scores(cache.translate("default", sources), corpus.tgt)}
            plain, _ = cache.routed(no_recasing, sources)
            row["pair_without_recasing"] = scores(plain, corpus.tgt)
            paired, share = cache.routed(router, sources)
            row["pair"] = scores(paired, corpus.tgt)
            row["share_to_everyday"] = round(share, 4)
            report[f"{name} {case}"] = row
            print(f"{name} {case}", json.dumps(row), f"({time.time() - start:.0f} s)", flush=True)
    return report


def english_of_docs() -> list[str]:
    """Prose sentences of README.md and docs/*.md: no code, tables, headings, or quoted German."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line[0] in "#|`!<>-*0123456789[" or "`" in line or "„" in line or "*" in line or '"' in line:
                continue
            found += [s for s in re.split(r"(?<=[.!?])\s+", line) if len(s.split()) >= 4]
    return found


NOT_GERMAN = ("not German", "Chinese")  # what the router says of text that is not German


def language_report(router: Router, sets: dict) -> dict:
    """Precision and recall of "not German" on the set built for it."""
    german = [s for c in sets.values() for s in c.src]
    german += [s.lower() for s in german]
    other = {
        "english (dev references)": [s for c in sets.values() for s in c.tgt],
        "english (docs)": english_of_docs(),
        "chinese and japanese": [line for line in OTHER_TEXT.read_text(encoding="utf-8").splitlines() if line.strip()],
        "emoji and digits": [
            "😀",
            "👍👍",
            "🍺🍺🍺",
            "😂 😂",
            "12345",
            "3.14",
            "2026-12-06",
            "+49 30 1234567",
            "100 %",
            "🇩🇪 🇬🇧",
        ],
    }
    flagged = lambda texts: [router.route(t).reads_like in NOT_GERMAN for t in texts]  # noqa: E731
    german_flagged = sum(flagged(german))
    other_flagged = {name: sum(flagged(texts)) for name, texts in other.items()}
    true_positives, positives = sum(other_flagged.values()), sum(len(t) for t in other.values())
    report = {
        "german_sentences": len(german),
        "german_called_not_german": german_flagged,
        "not_german": {name: f"{other_flagged[name]}/{len(texts)}" for name, texts in other.items()},
        "precision": round(true_positives / max(1, true_positives + german_flagged), 4),
        "recall": round(true_positives / max(1, positives), 4),
    }
    missed = [t for texts in other.values() for t in texts if router.route(t).reads_like not in NOT_GERMAN][:5]
    wrong = [t for t in german if router.route(t).reads_like == "not German"][:5]
    print("not German:", json.dumps(report), "\n  missed:", missed, "\n  German called not German:", wrong, flush=True)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captions", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--everyday", default=str(ROOT / "checkpoints" / "de-en-everyday"))
    parser.add_argument("--data-dir")
    parser.add_argument("--ding-dir")
    parser.add_argument("--test", action="store_true", help="score test2016 and the Ding test set too (once)")
    parser.add_argument("--output", help="write the report as JSON here too")
    args = parser.parse_args()
    multi30k, ding = data.resolve_data_dir(args.data_dir), data.find_ding(args.ding_dir)
    dev = {"val": data.load_split(multi30k, "val"), "ding-dev": data.load_split(ding, "dev")}
    sets = dict(dev)
    if args.test:
        sets.update(
            {"test2016": data.load_split(multi30k, "test_2016_flickr"), "ding-test": data.load_split(ding, "test")}
        )
    router = Router.of_checkpoint(args.captions)
    if router.domain is None or router.language is None or router.truecaser is None:
        raise SystemExit(
            f"{args.captions} lacks domain.json.gz or language.json.gz (python -m training.domain, "
            "python -m training.language)"
        )
    cache = Cached(
        {"default": Translator.from_pretrained(args.captions), "everyday": Translator.from_pretrained(args.everyday)}
    )
    report = {
        "beams": BEAMS,
        "length_penalty": LENGTH_PENALTY,
        "translation": translation_report(cache, router, sets),
        "not_german": language_report(router, dev),
    }
    print(json.dumps(report, indent=2))
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
