"""ui/pair.py: the page's translator, the shipped default and everyday checkpoints behind the router. Every handler
and endpoint takes each sentence to its model, says which, and lets a caller force one; a paragraph of both kinds is
translated sentence by sentence; one budget holds for both models together."""

from pathlib import Path

import pytest

from lens import cost
from lens.explain import DecodingOptions
from ui import api, head_lab, step_through
from ui.locales import message
from ui.pair import explain_routed
from ui.time_travel import route_note
from ui.translate import first_visit, page_handler

ROOT = Path(__file__).resolve().parents[1]
DEFAULT, EVERYDAY = ROOT / "checkpoints" / "de-en", ROOT / "checkpoints" / "de-en-everyday"
MIXED = "Wo ist der Bahnhof? Ein Mann fährt Fahrrad."


@pytest.fixture
def pair(shipped_pair):
    return shipped_pair


def alone(pair, name, text, beams=1):
    return pair.served(name).translator.translate(text, num_beams=beams)


def test_a_paragraph_of_both_kinds_is_explained_sentence_by_sentence_by_its_model(pair):
    x = page_handler(pair)(MIXED, "greedy", 1, 1.0, 64)
    first, second = x["sentences"]
    assert (first["route"]["model"], second["route"]["model"]) == ("everyday", "default")
    assert first["route"]["reads_like"] == "everyday" and "Wo" in first["route"]["words"]
    assert first["translation"] == alone(pair, "everyday", "Wo ist der Bahnhof?") == "Where is the station?"
    assert second["translation"] == alone(pair, "default", "Ein Mann fährt Fahrrad.")
    assert first["threshold"] == pair.everyday.familiarity.rule.confidence_below  # each model's own alarm
    assert second["threshold"] == pair.default.familiarity.rule.confidence_below
    other = page_handler(pair, other=True)(MIXED, "greedy", 1, 1.0, 64)  # the compare view: the other model each
    assert [s["route"]["model"] for s in other["sentences"]] == ["default", "everyday"]
    assert [s["route"]["other"] for s in other["sentences"]] == ["everyday", "default"]
    forced = page_handler(pair)(MIXED, "greedy", 1, 1.0, 64, "default")
    assert [s["route"]["model"] for s in forced["sentences"]] == ["default", "default"]
    assert forced["sentences"][0]["translation"] == alone(pair, "default", "Wo ist der Bahnhof?")


def test_lowercase_german_is_read_with_its_capitals_and_the_page_says_what_changed(pair):
    x = page_handler(pair)("wo ist der bahnhof? ich möchte ein bier", "beam search", 4, 1.0, 64)
    first, second = x["sentences"]
    assert first["source"] == "Wo ist der Bahnhof?" and first["route"]["recased"] == [
        ["wo", "Wo"],
        ["bahnhof", "Bahnhof"],
    ]
    assert second["source"] == "Ich möchte ein Bier" and "beer" in second["translation"]
    first, second = page_handler(pair)("你好。Where is the station?", "greedy", 1, 1.0, 64)["sentences"]
    assert first["route"]["reads_like"] == "Chinese" and second["route"]["reads_like"] == "not German"


def test_one_budget_holds_for_both_models_together(pair):
    options = DecodingOptions(1, 1.0, 64)
    sentences = pair.sentences(MIXED)[0]
    found = explain_routed(pair, sentences, options, cost.PAGE)
    used = sum(
        cost.map_weights(served.translator.config, len(s.explanation.source_tokens), len(s.explanation.target_tokens))
        for _, served, s in found
    )
    with pytest.raises(ValueError, match="would hold"):
        explain_routed(pair, sentences, options, cost.Budget("the page", used - 1, "shorten it"))
    assert len(explain_routed(pair, sentences, options, cost.Budget("the page", used, "shorten it"))) == 2


def test_every_endpoint_names_the_model_that_answered_and_a_forced_one_answers(pair):
    table = {e.name: e.handler for e in api.endpoint_table(pair, api.model_calls(pair))}
    options = DecodingOptions(1, 1.0, 32)
    sentence = "Wo ist der Bahnhof?"
    answers = {
        "trace": lambda m: table["trace"](sentence, options, 3, "", m),
        "ablate": lambda m: table["ablate"](sentence, '["cross:1:1"]', options, m),
        "qkv": lambda m: table["qkv"](sentence, "cross", 1, 1, 2, options, m),
        "logit_lens": lambda m: table["logit_lens"](sentence, options, "", m),
        "contributions": lambda m: table["contributions"](sentence, options, "", m),
        "contrast": lambda m: table["contrast"](sentence, 1, "Woke", options, m),
        "patch": lambda m: table["patch"](sentence, "Wo ist der Flughafen?", 0, options, m),
    }
    for name, ask in answers.items():
        auto, forced = ask("auto"), ask("default")
        assert (auto["model"], auto["reads_like"], forced["model"]) == ("everyday", "everyday", "default"), name
        assert forced["route"]["forced"] and not auto["route"]["forced"], name
    assert table["translate"](MIXED, options, "", "auto") == " ".join(
        [alone(pair, "everyday", "Wo ist der Bahnhof?"), alone(pair, "default", "Ein Mann fährt Fahrrad.")]
    )
    explained = table["explain"]("wo ist der bahnhof?", options, "", "auto")["sentences"][0]
    assert (explained["model"], explained["reads_like"], explained["source"]) == (
        "everyday",
        "everyday",
        "Wo ist der Bahnhof?",
    )
    with pytest.raises(ValueError, match="model must be one of auto, default, everyday"):
        table["translate"](MIXED, options, "", "both")


def test_the_views_follow_the_sentences_model(pair):
    run, force, hypothesis = step_through.handlers(pair)
    x = run("Wo ist der Bahnhof?", 2)
    assert x["model"] == "everyday" and x["greedy"]["translation"] == "Where is the station?"
    assert run("Wo ist der Bahnhof?", 2, "default")["model"] == "default"
    ids = x["greedy"]["ids"][:1]
    forced = force({"text": "Wo ist der Bahnhof?", "num_beams": 1, "ids": ids, "word": None, "model": x["model"]})
    assert forced["model"] == "everyday" and "error" not in forced
    assert hypothesis({"text": "Wo ist der Bahnhof?", "ids": ids, "model": "everyday"})["model"] == "everyday"
    ablation, _ = head_lab.handlers(pair)
    lab = ablation("Wo ist der Bahnhof?", '["cross:1:1"]')
    assert lab["model"] == "everyday" and "error" not in lab
    note = route_note(pair)
    assert note("Wo ist der Bahnhof?") == "app.history.note_everyday" and note("Ein Mann fährt Fahrrad.") == ""
    assert "everyday model" in message(note("Wo ist der Bahnhof?")) and "日常" in message(
        note("Wo ist der Bahnhof?"), "zh-CN"
    )


def test_the_first_visit_is_routed_too(pair):
    text, x = first_visit(pair, MIXED)
    assert text == MIXED and [s["route"]["model"] for s in x["sentences"]] == ["everyday", "default"]
