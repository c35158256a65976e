"""The ten experiments, one for each question learners ask most, read from the table the page reads too
(ui/static/experiments.json): each a base (changes to the lab's defaults), pairs (A as the paper has it, B with one
thing changed; the first pair is the default), the direction the page's text states (`expect`: which of A and B ends
better on which measure; a pair may have its own), the one line of model code B changes, and `short`, a reduced
number of steps at which the default pair already goes that way (tests/test_lab_page.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .settings import LabSettings

TABLE = Path(__file__).resolve().parents[1] / "ui" / "static" / "experiments.json"
# the final training loss, the mean loss of the first third (how fast it fell), teacher-forced and greedy accuracy
METRICS = ("loss", "early", "forced", "greedy")


@dataclass(frozen=True)
class Experiment:
    id: str
    base: dict[str, Any]
    pairs: list[dict[str, Any]]
    expect: dict[str, Any]
    code: dict[str, Any]
    short: int  # the fewest steps (seed 0) at which the runs already go the way the text says: the browser tests' size

    def expected(self, pair: str | None = None) -> dict[str, Any]:
        """The direction the text states for `pair`: its own where it has one, else the experiment's."""
        chosen = next((p for p in self.pairs if p["id"] == pair), self.pairs[0])
        return chosen.get("expect", self.expect)

    def pair_ids(self) -> list[str]:
        return [p["id"] for p in self.pairs]

    def settings(self, pair: str | None = None, seed: int = 0, **overrides: Any) -> tuple[LabSettings, LabSettings]:
        """A's and B's settings for `pair` (the first when None)."""
        chosen = self.pairs[0] if pair is None else next((p for p in self.pairs if p["id"] == pair), None)
        if chosen is None:
            raise ValueError(f"{self.id} has no pair {pair!r}; it has {', '.join(self.pair_ids())}")
        common = {**self.base, **overrides, "seed": seed}
        return LabSettings.from_dict({**common, **chosen["a"]}), LabSettings.from_dict({**common, **chosen["b"]})


def experiments() -> dict[str, Experiment]:
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    return {name: Experiment(id=name, **fields) for name, fields in table.items()}


def better(metric: str, a: float, b: float) -> str:
    """Which run ended better: a lower loss, a higher accuracy."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if a == b:
        return "neither"
    return ("a" if a < b else "b") if metric in ("loss", "early") else ("a" if a > b else "b")


def holds(expect: dict[str, Any], a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether the runs' final figures go the way the text says (and its `also`, where it has one)."""
    ok = better(expect["metric"], a[expect["metric"]], b[expect["metric"]]) == expect["better"]
    return ok and (holds(expect["also"], a, b) if "also" in expect else True)
