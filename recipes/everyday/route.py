"""The domain chosen at translation time: the captions model translates, and a sentence a router sends on is
translated by the everyday model instead. Two routers and their union: the captions model's alarm (lens/alarm.py,
the rule in its alarm.json, chosen on the dev sets), and the guess of which kind of German a sentence is
(lens/domain.py, from the training sentences of the two corpora, in domain.json.gz). Scores the captions model,
the everyday model and each routed pair on Multi30k val and the Ding dev set (beam 5, each checkpoint's own length
penalty and no-repeat rule), with the share routed.

    python recipes/everyday/route.py [--captions checkpoints/de-en] [--everyday checkpoints/de-en-everyday] [--test]

Nothing here is chosen: the routers' numbers come from their files. `--test` scores the two test sets as well
(once, for a final report); without it no test set is read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from lens.alarm import AlarmRule, load_rule, rare_share  # noqa: E402
from lens.confidence import mean_log_prob  # noqa: E402
from lens.domain import load_domain  # noqa: E402
from lens.evidence import load_evidence  # noqa: E402
from lens.explain import DecodingOptions, explain_batch  # noqa: E402
from translation import Translator  # noqa: E402


def routed(first: list[str], second: list[str], flagged: list[bool]) -> list[str]:
    """Per sentence the first model's translation, or the second's where the alarm fired."""
    if not len(first) == len(second) == len(flagged):
        raise ValueError(f"{len(first)} first, {len(second)} second translations and {len(flagged)} flags")
    return [b if f else a for a, b, f in zip(first, second, flagged)]


def length_penalty(folder: str) -> float:
    return json.loads((Path(folder) / "results.json").read_text(encoding="utf-8"))["results"]["decoding"]["length_penalty"]


def explained(translator: Translator, evidence, rule: AlarmRule, sentences: list[str], penalty: float,
              chunk: int = 64) -> tuple[list[str], list[bool]]:
    """The captions model's beam-5 translations and, per sentence, whether its alarm fires."""
    options = DecodingOptions(num_beams=5, length_penalty=penalty)
    translations, flags = [], []
    for start in range(0, len(sentences), chunk):
        for sentence in explain_batch(translator, sentences[start:start + chunk], options):
            counts = [w["count"] for w in evidence.for_sentence(sentence.source)]
            unseen, n_pairs = evidence.unseen_bigrams(sentence.source)
            translations.append(sentence.explanation.translation)
            flags.append(rule.fires(mean_log_prob(sentence.explanation.target_probs), rare_share(counts, rule.rare_below),
                                    len(unseen) / n_pairs if n_pairs else 0.0))
    return translations, flags


def main() -> int:
    import sacrebleu

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captions", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--everyday", default=str(ROOT / "checkpoints" / "de-en-everyday"))
    parser.add_argument("--data-dir")
    parser.add_argument("--ding-dir")
    parser.add_argument("--test", action="store_true", help="score test2016 and the Ding test set too (once)")
    args = parser.parse_args()
    multi30k, ding = data.resolve_data_dir(args.data_dir), data.find_ding(args.ding_dir)
    sets = {"val": data.load_split(multi30k, "val"), "ding-dev": data.load_split(ding, "dev")}
    if args.test:
        sets.update({"test2016": data.load_split(multi30k, "test_2016_flickr"), "ding-test": data.load_split(ding, "test")})
    captions, everyday = Translator.from_pretrained(args.captions), Translator.from_pretrained(args.everyday)
    evidence, rule, domain = load_evidence(args.captions), load_rule(args.captions), load_domain(args.captions)
    if evidence is None:
        raise SystemExit(f"{args.captions} has no evidence index: the alarm needs one (python -m training.evidence)")
    if domain is None:
        raise SystemExit(f"{args.captions} has no {args.captions}/domain.json.gz (python -m training.domain)")
    report = {"alarm": rule.to_dict()}
    for name, corpus in sets.items():
        start = time.time()
        first, alarm = explained(captions, evidence, rule, corpus.src, length_penalty(args.captions))
        second = everyday.translate(corpus.src, num_beams=5, length_penalty=length_penalty(args.everyday))
        kind = [domain.everyday(s) for s in corpus.src]
        routers = {"alarm": alarm, "domain": kind, "domain_or_alarm": [a or k for a, k in zip(alarm, kind)]}
        row = {"routed_share": {name: round(sum(flags) / len(flags), 4) for name, flags in routers.items()}}
        candidates = {"captions": first, "everyday": second}
        candidates.update({f"routed_by_{name}": routed(first, second, flags) for name, flags in routers.items()})
        for label, hyp in candidates.items():
            row[label] = {"bleu": round(sacrebleu.corpus_bleu(hyp, [corpus.tgt]).score, 2),
                          "chrf": round(sacrebleu.corpus_chrf(hyp, [corpus.tgt]).score, 2)}
        report[name] = row
        print(name, json.dumps(row), f"({time.time() - start:.0f} s)", flush=True)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
