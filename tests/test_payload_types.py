"""One schema for what Python sends and what the page's modules are type-checked with: every interface of
ui/static/types.d.ts that describes a payload names exactly the fields the payload has (an optional field may be
absent, no field may be missing or unnamed). The payloads are the real ones: the page's handlers and the API's
endpoints on the shipped checkpoints, through the router."""

import re
from pathlib import Path

import pytest

from lens.explain import DecodingOptions
from ui import api, step_through
from ui.head_lab_data import importance_payload, load_importance
from ui.translate import page_handler

ROOT = Path(__file__).resolve().parents[1]
DEFAULT, EVERYDAY = ROOT / "checkpoints" / "de-en", ROOT / "checkpoints" / "de-en-everyday"
TYPES = ROOT / "ui" / "static" / "types.d.ts"
INTERFACE = re.compile(r"^interface (\w+)(?: extends ([\w, ]+))? \{\n(.*?)^\}", re.M | re.S)
MEMBER = re.compile(r"^  (\w+)(\?)?:", re.M)
TEXT = "Wo ist der Bahnhof? Ein Mann fährt Fahrrad."


def interfaces() -> dict[str, tuple[set[str], set[str]]]:
    """Each interface of types.d.ts: (its required members, its optional ones), those it extends included."""
    found = {}
    for name, bases, body in INTERFACE.findall(TYPES.read_text(encoding="utf-8")):
        members = MEMBER.findall(body)
        found[name] = (
            {m for m, optional in members if not optional},
            {m for m, optional in members if optional},
            bases,
        )
    merged = {}

    def members(name):
        if name not in merged:
            required, optional, bases = found[name]
            for base in filter(None, (b.strip() for b in bases.split(","))):
                inherited = members(base)
                required, optional = required | inherited[0], optional | inherited[1]
            merged[name] = (required - optional, optional)
        return merged[name]

    return {name: members(name) for name in found}


def mismatch(payload: dict, interface: str) -> str:
    """What differs between a payload's fields and its interface ("" where nothing)."""
    required, optional = interfaces()[interface]
    missing, unnamed = required - set(payload), set(payload) - required - optional
    return (
        (
            f"{interface}: "
            + (f"missing {sorted(missing)} " if missing else "")
            + (f"not declared {sorted(unnamed)}" if unnamed else "")
        )
        if missing or unnamed
        else ""
    )


@pytest.fixture
def pair(shipped_pair):
    return shipped_pair


def test_the_parser_reads_members_and_inheritance():
    required, optional = interfaces()["Sentence"]
    assert {"source", "translation", "tokens", "maps"} <= required and "route" in optional | required
    assert mismatch({"a": 1}, "Route").startswith("Route: missing")


def test_the_explanation_the_page_draws_is_its_declared_type(pair):
    x = page_handler(pair)(TEXT, "greedy", 1, 1.0, 64)
    problems = [mismatch(x, "Explanation"), mismatch(x["options"], "DecodingOptions")]
    for sentence in x["sentences"]:
        problems += [mismatch(sentence, "Sentence"), mismatch(sentence["route"], "Route")]
        problems += [mismatch(e, "Evidence") for e in sentence["evidence"]]
    assert not [p for p in problems if p], problems


def test_the_step_views_payload_is_its_declared_type(pair):
    run, _, _ = step_through.handlers(pair)
    x = run("Wo ist der Bahnhof?", 2)
    problems = [mismatch(x, "StepPayload"), mismatch(x["greedy"], "Trace"), mismatch(x["beam"], "Trace")]
    problems += [mismatch(node, "BeamNode") for node in x["beam"]["beam"]]
    assert not [p for p in problems if p], problems


def test_the_answers_the_inside_views_draw_are_their_declared_types(pair):
    table = {e.name: e.handler for e in api.endpoint_table(pair, api.model_calls(pair))}
    options, sentence = DecodingOptions(1, 1.0, 32), "Wo ist der Bahnhof?"
    answers = {
        "QkvAnswer": table["qkv"](sentence, "cross", 1, 1, 2, options, "auto"),
        "LogitLensAnswer": table["logit_lens"](sentence, options, "", "auto"),
        "ContributionsAnswer": table["contributions"](sentence, options, "", "auto"),
        "ContrastAnswer": table["contrast"](sentence, 1, "Woke", options, "auto"),
        "PatchAnswer": table["patch"](sentence, "Wo ist der Flughafen?", 0, options, "auto"),
    }
    problems = [mismatch(answer, name) for name, answer in answers.items()]
    problems += [mismatch(answer["route"], "Route") for answer in answers.values()]
    assert not [p for p in problems if p], problems


def test_the_head_labs_grids_are_their_declared_type(pair):
    config = pair.default.translator.config
    grids = importance_payload(load_importance(str(DEFAULT), None, config), config)
    assert grids["importance"] is not None, "the shipped checkpoint ships its head importance"
    assert not mismatch(grids, "ImportancePayload"), mismatch(grids, "ImportancePayload")
