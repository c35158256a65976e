"""recipes/tag_scores.py: the domain tag goes in front of the sentences chosen, and nowhere else."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("tag_scores", ROOT / "recipes" / "tag_scores.py")
tag_scores = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tag_scores)


def test_the_tag_goes_in_front_of_the_chosen_sentences_only():
    assert tag_scores.with_tag(["Ein Hund.", "Wo bist du?"], "<CAP>", [True, False]) == [
        "<CAP> Ein Hund.",
        "Wo bist du?",
    ]


def test_lists_of_other_lengths_are_refused():
    with pytest.raises(ValueError, match="2 sentences and 1 choices"):
        tag_scores.with_tag(["a", "b"], "<CAP>", [True])
