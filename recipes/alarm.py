"""Choose the unfamiliar-input alarm: the model's confidence combined with the evidence of the training data.

    python recipes/alarm.py [--checkpoint checkpoints/de-en] [--data-dir ../shared/data/multi30k]
                          [--ding-dir runs/corpora/ding] [--write]

For every Multi30k val caption and every everyday (Ding) dev sentence: the mean log-probability of
the model's own translation (beam 4), the share of German words that are rare in the training data
and of neighbouring-word pairs never seen there (training_data/evidence.py), and the sentence's chrF. Then every rule of training_data/alarm.py's form is tried on a
grid; the chosen one flags at most 5 % of val captions and best tells the badly translated sentences
(sentence chrF under 35) from the others on both dev sets together (balanced accuracy); the report
gives its everyday chrF gap between flagged and unflagged sentences. The rule is chosen on the even-numbered
sentences of both dev sets and reported on the odd-numbered ones too (`held_out`: captions and everyday
sentences it never saw). `--write` stores it in the checkpoint's alarm.json. Dev sets only, unless `--test`:
then test2016's alarm rate is reported too, once, for the checkpoint you ship.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np
from sacrebleu.metrics import CHRF

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import data  # noqa: E402
from lens.explain import DecodingOptions, explain_batch  # noqa: E402
from training_data.alarm import ALARM_FILE, AlarmRule, rare_share  # noqa: E402
from training_data.confidence import mean_log_prob  # noqa: E402
from training_data.evidence import load_evidence  # noqa: E402
from translation import Translator  # noqa: E402

MAX_VAL_ALARMS = 0.05
BAD_CHRF = 35.0  # a sentence translated this badly (chrF) should raise the alarm
CONFIDENCE_GRID = [round(x, 2) for x in np.arange(-1.2, -0.19, 0.04)]
RARE_GRID = [5, 10, 25, 50, 100]
SHARE_GRID = [0.1, 0.2, 0.34, 0.5, 0.6, 0.67, 0.75, 1.01]  # 1.01: words never decide


def features(translator: Translator, evidence, corpus: data.ParallelCorpus, chunk: int = 64) -> list[dict]:
    """Per sentence: mean log-probability, the words' training counts and chrF of the translation."""
    chrf, rows = CHRF(), []
    options = DecodingOptions(num_beams=4)
    for start in range(0, len(corpus.src), chunk):
        batch = explain_batch(translator, corpus.src[start : start + chunk], options)
        for sentence, reference in zip(batch, corpus.tgt[start : start + chunk]):
            words = evidence.for_sentence(sentence.source)
            unseen, n_pairs = evidence.unseen_bigrams(sentence.source)
            rows.append(
                {
                    "mean_log_prob": mean_log_prob(sentence.explanation.target_probs),
                    "counts": [w["count"] for w in words],
                    "unseen_pairs": len(unseen) / n_pairs if n_pairs else 0.0,
                    "chrf": chrf.sentence_score(sentence.explanation.translation, [reference]).score,
                }
            )
    return rows


def flags(rows: list[dict], rule: AlarmRule) -> np.ndarray:
    return np.array(
        [rule.fires(r["mean_log_prob"], rare_share(r["counts"], rule.rare_below), r["unseen_pairs"]) for r in rows]
    )


def choose(val: list[dict], everyday: list[dict]) -> tuple[AlarmRule, dict]:
    """Within the val false-alarm budget, the rule that best tells bad translations (sentence chrF under
    BAD_CHRF) from the rest on both dev sets pooled (balanced accuracy), reported with its everyday chrF gap."""
    best, report = None, None
    pooled = val + everyday
    bad = np.array([r["chrf"] < BAD_CHRF for r in pooled])
    chrf = np.array([r["chrf"] for r in everyday])
    for confidence, rare, share, pairs in itertools.product(CONFIDENCE_GRID, RARE_GRID, SHARE_GRID, SHARE_GRID):
        rule = AlarmRule(confidence_below=confidence, rare_below=rare, rare_share_above=share, unseen_pairs_above=pairs)
        val_rate = float(flags(val, rule).mean())
        fired = flags(pooled, rule)
        if val_rate > MAX_VAL_ALARMS:
            continue
        balanced = float((fired[bad].mean() + (~fired[~bad]).mean()) / 2)
        if best is None or balanced > report["balanced_accuracy"]:
            flagged = fired[len(val) :]
            best = rule
            report = {
                "val_alarm_rate": val_rate,
                "everyday_alarm_rate": float(flagged.mean()),
                "balanced_accuracy": balanced,
                "bad_translations_caught": float(fired[bad].mean()),
                "everyday_chrf_flagged": float(chrf[flagged].mean()) if flagged.any() else None,
                "everyday_chrf_not_flagged": float(chrf[~flagged].mean()) if not flagged.all() else None,
            }
    if report["everyday_chrf_flagged"] is not None and report["everyday_chrf_not_flagged"] is not None:
        report["chrf_gap"] = report["everyday_chrf_not_flagged"] - report["everyday_chrf_flagged"]
    return best, report


def held_out(rule: AlarmRule, val: list[dict], everyday: list[dict]) -> dict:
    """The rule's alarm rate on captions and its everyday chrF gap on sentences it was not chosen on."""
    fired, chrf = flags(everyday, rule), np.array([r["chrf"] for r in everyday])
    report = {"val_alarm_rate": float(flags(val, rule).mean()), "everyday_alarm_rate": float(fired.mean())}
    if fired.any() and not fired.all():
        report["chrf_gap"] = float(chrf[~fired].mean() - chrf[fired].mean())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--ding-dir", default=None)
    parser.add_argument("--write", action="store_true", help="store the chosen rule in the checkpoint's alarm.json")
    parser.add_argument("--test", action="store_true", help="also report test2016's alarm rate (once, at the end)")
    args = parser.parse_args()
    translator = Translator.from_pretrained(args.checkpoint)
    evidence = load_evidence(args.checkpoint)
    if evidence is None:
        raise SystemExit(
            f"{args.checkpoint} has no evidence index: build it first (python -m training.evidence --checkpoint ...)"
        )
    start = time.perf_counter()
    val = features(translator, evidence, data.load_split(data.find_corpus(args.data_dir), "val"))
    everyday = features(translator, evidence, data.load_split(data.find_ding(args.ding_dir), "dev"))
    rule, report = choose(val[0::2], everyday[0::2])
    report["held_out"] = held_out(rule, val[1::2], everyday[1::2])
    if args.test:
        test = features(translator, evidence, data.load_split(data.find_corpus(args.data_dir), "test_2016_flickr"))
        report["test2016_alarm_rate"] = float(flags(test, rule).mean())
    old = AlarmRule(confidence_below=-0.52, rare_below=1, rare_share_above=1.01)  # the confidence-only notice
    old_flags = flags(everyday, old)
    report["confidence_only"] = {
        "val_alarm_rate": float(flags(val, old).mean()),
        "everyday_alarm_rate": float(old_flags.mean()),
    }
    print(json.dumps({"rule": rule.to_dict(), **report, "seconds": round(time.perf_counter() - start, 1)}, indent=2))
    if args.write:
        (Path(args.checkpoint) / ALARM_FILE).write_text(
            json.dumps({"rule": rule.to_dict(), "chosen_by": report}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
