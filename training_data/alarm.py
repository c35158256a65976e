"""Is this sentence unlike what the model learned? The model's confidence, and the evidence of its training data.

Three signals, any of which raises the alarm:
- the model was unsure: the mean log-probability per token of its own translation is low;
- the German is unfamiliar: a large share of its words were rare (or never seen) in training;
- its words go together in unfamiliar ways: a large share of its neighbouring-word pairs were never seen.
The rule's numbers were chosen on the Multi30k val captions and the everyday dev set by
recipes/alarm.py and are stored beside the weights (alarm.json); each alarm says why it fired.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .checked_json import (
    checked_object,
    is_finite,
    is_whole,
    optional,
    read_json,
    refused,
)
from .confidence import UNFAMILIAR_BELOW, mean_log_prob

if TYPE_CHECKING:  # read when a checkpoint is loaded (load_familiarity), not when this module is
    from .domain import DomainGuess
    from .evidence import Evidence

ALARM_FILE = "alarm.json"
MAX_FILE_BYTES, MAX_DEPTH = 64 << 10, 4  # the shipped rules: under 1 kB, 3 deep
# What each number of a stored rule may be: (lowest, highest, "finite" or "whole"). Mean log-probabilities are
# at most 0; a share above 1 never fires (the rule's way to leave a signal out).
RANGES = {
    "confidence_below": (-1000, 0, "finite"),
    "rare_below": (0, 10**9, "whole"),
    "rare_share_above": (0, 2, "finite"),
    "unseen_pairs_above": (0, 2, "finite"),
}


@dataclass(frozen=True)
class AlarmRule:
    confidence_below: float = UNFAMILIAR_BELOW  # mean log-probability per token under which the model was unsure
    rare_below: int = 5  # a word seen fewer times than this in training is rare
    rare_share_above: float = 1.01  # more than this share of rare words raises the alarm (above 1: never)
    unseen_pairs_above: float = 1.01  # more than this share of never-seen neighbouring-word pairs (above 1: never)

    def fires(self, mean_log_prob: float, rare_share: float, unseen_pair_share: float = 0.0) -> bool:
        return (
            mean_log_prob < self.confidence_below
            or rare_share > self.rare_share_above
            or unseen_pair_share > self.unseen_pairs_above
        )

    def to_dict(self) -> dict:
        return asdict(self)


def rare_share(counts: list[int], rare_below: int) -> float:
    """The share of a sentence's words seen fewer than `rare_below` times in training (0 for no words)."""
    return sum(c < rare_below for c in counts) / len(counts) if counts else 0.0


def load_rule(folder: str | Path | None) -> AlarmRule:
    """The rule stored beside a checkpoint, else the confidence-only default; a bad alarm.json is refused
    (a CheckpointFileError naming the file and the entry)."""
    path = Path(folder) / ALARM_FILE if folder else None
    if path is None or not path.is_file():
        return AlarmRule()
    stored = read_json(path, MAX_FILE_BYTES, MAX_DEPTH)
    checked_object(stored, path, "the file", ("rule",), ("rule", "chosen_by"))
    rule = checked_object(stored["rule"], path, "rule", RANGES, RANGES)
    for name, (low, high, wanted) in RANGES.items():
        value = rule[name]
        if not (is_whole(value, low, high) if wanted == "whole" else is_finite(value, low, high)):
            raise refused(path, f"rule.{name}", value, f"a {wanted} number from {low} to {high}")
    return AlarmRule(**rule)


def reason_text(alarm: dict) -> str:
    """One of judge's alarms in English words (the API's `reasons`)."""
    if alarm["kind"] == "unsure":
        return f"the model was unsure of its translation (mean log-probability {alarm['mean']:.2f}, below {alarm['below']:.2f})"
    if alarm["kind"] == "rare":
        listed = ", ".join(f"'{w}' ({'never' if n == 0 else str(n) + 'x'})" for w, n in alarm["words"])
        return (
            f"{alarm['share']:.0%} of its words were seen fewer than {alarm['fewer_than']} times in the training data: "
            f"{listed}"
        )
    listed = ", ".join(f"'{b}'" for b in alarm["listed"])
    return f"{alarm['unseen']} of its {alarm['pairs']} word pairs never occur in the training data: {listed}"


def judge(
    target_probs: np.ndarray, words: list[dict] | None, rule: AlarmRule, unseen_pairs: tuple[list[str], int] = ([], 0)
) -> dict:
    """`unfamiliar` and its `reasons` for one sentence (`words`: lens/evidence's entries, None without an index;
    `unseen_pairs`: its never-seen neighbouring-word pairs and how many pairs it has)."""
    confidence = mean_log_prob(target_probs)
    unseen, n_pairs = unseen_pairs
    pair_share = len(unseen) / n_pairs if n_pairs else 0.0
    counts = [w["count"] for w in words or []]
    share = rare_share(counts, rule.rare_below)
    alarms: list[dict] = []  # each reason as data, for a page to say in its own language
    if confidence < rule.confidence_below:
        alarms.append({"kind": "unsure", "mean": round(confidence, 2), "below": round(rule.confidence_below, 2)})
    if words and share > rule.rare_share_above:
        rare = [[w["word"], int(w["count"])] for w in words if w["count"] < rule.rare_below]
        alarms.append({"kind": "rare", "share": share, "fewer_than": rule.rare_below, "words": rare[:4]})
    if pair_share > rule.unseen_pairs_above:
        alarms.append({"kind": "pairs", "unseen": len(unseen), "pairs": n_pairs, "listed": list(unseen[:4])})
    reasons = [reason_text(alarm) for alarm in alarms]
    return {
        "unfamiliar": bool(reasons),
        "reasons": reasons,
        "alarms": alarms,
        "mean_log_prob": confidence,
        "rare_share": share,
        "unseen_pair_share": pair_share,
    }


@dataclass
class Familiarity:
    """What a checkpoint knows of its training data: its evidence index (or None), its alarm rule, and the guess
    of which kind of German a text is (training_data/domain.py; None where the checkpoint has none)."""

    evidence: Evidence | None = None
    rule: AlarmRule = AlarmRule()
    domain: DomainGuess | None = None

    def report(self, source: str, target_probs: np.ndarray) -> dict:
        """`evidence` (one entry a distinct German word, empty without an index), `unfamiliar`, `reasons` (and the same
        as data, `alarms`), and
        with a domain guess `domain` (training_data.domain.DomainGuess.report: `everyday`, `log_odds`, `words`)."""
        words = self.evidence.for_sentence(source) if self.evidence is not None else None
        pairs = self.evidence.unseen_bigrams(source) if self.evidence is not None else ([], 0)
        verdict = judge(target_probs, words, self.rule, pairs)
        report = {
            "evidence": words or [],
            "unfamiliar": verdict["unfamiliar"],
            "reasons": verdict["reasons"],
            "alarms": verdict["alarms"],
        }
        if self.domain is not None:
            report["domain"] = self.domain.report(source)
        return report


def load_familiarity(model_id: str | Path, revision: str | None = None) -> Familiarity:
    """The evidence index and alarm rule of a checkpoint folder or Hub repo; what is missing falls back
    to no evidence and the confidence-only rule (checkpoints older than both), and so does what is refused:
    each refused file is one warning that names it and turns its feature off."""
    from model.checkpoint.hub import resolve_file

    from .domain import load_domain
    from .evidence import EVIDENCE_FILE, read_index

    found: dict[str, Path | None] = {}
    for name in (EVIDENCE_FILE, ALARM_FILE):
        try:
            found[name] = resolve_file(model_id, name, revision=revision)
        except Exception:  # noqa: BLE001 - absent in this checkpoint, or the Hub unreachable: go without
            found[name] = None
    evidence_file, alarm_file = found[EVIDENCE_FILE], found[ALARM_FILE]
    evidence, rule = None, AlarmRule()
    if evidence_file:
        evidence = optional(lambda: read_index(evidence_file), "the training-data evidence is off")
    if alarm_file:
        rule = (
            optional(
                lambda: load_rule(alarm_file.parent),
                "its alarm rule is off: the alarm listens to the model's confidence only",
            )
            or AlarmRule()
        )
    return Familiarity(evidence, rule, load_domain(model_id, revision))
