"""recipes/everyday/route.py: the captions model translates, and where its alarm fires the everyday model's
translation is taken instead."""

import importlib.util
from pathlib import Path

import pytest

from lens.alarm import load_rule
from lens.evidence import load_evidence
from translation import Translator

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS = ROOT / "checkpoints" / "de-en"
spec = importlib.util.spec_from_file_location("route", ROOT / "recipes" / "everyday" / "route.py")
route = importlib.util.module_from_spec(spec)
spec.loader.exec_module(route)


def test_a_flagged_sentence_takes_the_second_translation():
    assert route.routed(["a", "b", "c"], ["A", "B", "C"], [False, True, False]) == ["a", "B", "c"]


def test_lists_of_other_lengths_are_refused():
    with pytest.raises(ValueError, match="2 first, 1 second"):
        route.routed(["a", "b"], ["A"], [True, False])


def test_the_shipped_alarm_routes_everyday_german_and_keeps_a_caption():
    translator = Translator.from_pretrained(CAPTIONS, device="cpu")
    translations, flags = route.explained(translator, load_evidence(CAPTIONS), load_rule(CAPTIONS),
                                          ["Ich habe keine Zeit.", "Ein Mann fährt Fahrrad."], penalty=1.0)
    assert flags == [True, False]
    assert all(t.strip() for t in translations)
