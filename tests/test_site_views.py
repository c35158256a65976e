"""The views beside the translation on the static site, each the app's own module with the page's model behind
it, against the Python lens. Who wrote each word (alti.js, ALTI+) against lens/contributions.py. The step-through (siteviews.js mounts stepthrough.js; steptrace.js answers it with the page's
model): the same traces as ui/step_through.py's for greedy and beam search (pieces, probabilities, candidates,
attention rows, the beam tree and the n-best list), what-if forcing as the server forces, and the view driven by
clicks in Chromium with every request but the site's refused."""

import numpy as np
import pytest

from tests.test_site import page, pair_page, pytestmark, shipped_translator, val  # noqa: F401  (fixtures)
from tests.test_ui_page import browser  # noqa: F401  (a fixture)
from ui.payload import dequantize
from ui.step_through import trace_payload, view_payload

SENTENCES = ["Ein weißer Junge fegt eine Veranda mit einem großen Besen.", "Ein Mann fährt Fahrrad."]


def same_trace(ours: dict, theirs: dict, L: int, H: int) -> None:
    """Two traces (trace_payload's fields) agree: the pieces exactly, the numbers to the page's precision."""
    assert (ours["ids"], ours["tokens"], ours["translation"]) == (
        theirs["ids"],
        theirs["tokens"],
        theirs["translation"],
    )
    assert (ours["forced"], ours["prefix_length"], ours["src"]) == (
        theirs["forced"],
        theirs["prefix_length"],
        theirs["src"],
    )
    assert np.allclose(ours["probs"], theirs["probs"], atol=2e-3) and np.allclose(
        ours["entropy"], theirs["entropy"], atol=2e-2
    )
    assert [[c[1] for c in row[:3]] for row in ours["top"]] == [[c[1] for c in row[:3]] for row in theirs["top"]]
    T, S = len(ours["ids"]), len(ours["src"]["tokens"])
    for kind, shape in (("cross", (T, L, H, S)), ("decoder", (T, L, H, T))):
        diff = np.abs(dequantize(ours[kind], shape) - dequantize(theirs[kind], shape)).max()
        assert diff <= 2 / 255, (kind, diff)
    nodes = lambda tr: sorted((tuple(n["ids"]), n["status"], round(n["log_prob"], 1)) for n in tr["beam"])  # noqa: E731
    assert nodes(ours) == nodes(theirs)
    by_id = lambda tr: {n["id"]: n["ids"] for n in tr["beam"]}  # noqa: E731
    assert [by_id(ours)[i] for i in ours["nbest"]] == [by_id(theirs)[i] for i in theirs["nbest"]]


@pytest.mark.parametrize("beams", [1, 4])
def test_the_traces_are_the_servers(page, shipped_translator, beams):
    config = shipped_translator.config
    for text in SENTENCES + val(6):
        ours = page.evaluate("([t, k]) => window.attentionLens.step(t, k)", [text, beams])
        theirs = view_payload(shipped_translator, text, beams)
        assert (ours["layers"], ours["heads"], ours["num_beams"]) == (theirs["layers"], theirs["heads"], beams)
        same_trace(ours["greedy"], theirs["greedy"], config.n_decoder_layers, config.n_heads)
        assert (ours["beam"] is None) == (theirs["beam"] is None)
        if theirs["beam"]:
            assert len(ours["beam"]["beam"]) > len(ours["beam"]["ids"])  # a tree, not a path
            same_trace(ours["beam"], theirs["beam"], config.n_decoder_layers, config.n_heads)


def test_forcing_a_word_redoes_the_search_as_the_server_does(page, shipped_translator):
    from lens.trace import trace

    text = SENTENCES[0]
    ids = shipped_translator.encode_source(text)[0]
    greedy = view_payload(shipped_translator, text, 1)["greedy"]
    for prefix, word, beams in (
        (greedy["ids"][:1] + [greedy["top"][1][1][1]], None, 4),
        (greedy["ids"][:2], "tall", 1),
    ):
        request = {"text": text, "num_beams": beams, "ids": prefix, "word": word, "model": "auto"}
        ours = page.evaluate("(r) => window.attentionLens.stepForce(r)", request)
        forced = prefix if word is None else shipped_translator.prefix_with_word(prefix, word)
        theirs = trace_payload(shipped_translator, trace(shipped_translator, text, beams, top_k=10, prefix=forced), ids)
        same_trace(ours["trace"], theirs, shipped_translator.config.n_decoder_layers, shipped_translator.config.n_heads)
        assert ours["maps"]["sentences"][0]["translation"] == theirs["translation"] and ours["model"] == "default"
    hypothesis = page.evaluate("(r) => window.attentionLens.stepHypothesis(r)", {"text": text, "ids": greedy["ids"]})
    assert hypothesis["sentences"][0]["tokens"]["tgt"] == greedy["tokens"]


@pytest.mark.parametrize(
    "request_, said",
    [
        ({"text": "", "num_beams": 4, "ids": [5]}, "Please enter a German sentence"),
        ({"text": "Ein Hund. Eine Katze.", "num_beams": 4, "ids": [5]}, "takes one sentence; this text has 2"),
        ({"text": "Ein Hund.", "num_beams": 4, "ids": [], "word": None}, "nothing to force"),
        ({"text": "Ein Hund.", "num_beams": 4, "ids": [10**6]}, "each in [0, 8000)"),
        ({"text": "Ein Hund.", "num_beams": 99, "ids": [5]}, "num_beams must be"),
        ({"text": "Ein Hund.", "num_beams": 1, "ids": [5], "word": "x" * 41}, "type one English word"),
    ],
)
def test_bad_requests_get_the_servers_words(page, request_, said):
    from ui.locales import message

    answer = page.evaluate("(r) => window.attentionLens.stepForce(r)", request_)
    if answer.get("error_key"):  # a refusal the page writes in its language, from the server's key
        words = {name: message(key) for name, key in answer["error_words"].items()}
        english = message(answer["error_key"], **answer["error_values"], **words)
    else:
        english = answer["error"]
    assert said in english, english


def test_the_view_steps_forces_and_opens_a_hypothesis_by_clicks(page):
    page.click("#site-step > summary")  # the view is folded until opened
    page.fill("#site-step-source", SENTENCES[0])
    page.fill("#site-step-beams", "4")
    page.click("#site-step-go")
    view = page.locator("#site-step .st-view")
    page.wait_for_function(
        "() => { const v = document.querySelector('#site-step .st-view'); return v && !v.classList.contains('st-empty') && !v.classList.contains('st-busy'); }",
        timeout=60_000,
    )
    assert "boy" in view.locator(".st-card").first.inner_text()
    page.locator("#site-step .st-cand").nth(1).click()
    page.wait_for_function("() => document.querySelector('#site-step .st-whatif').dataset.shown", timeout=30_000)
    assert "What if" in page.locator("#site-step .st-whatif").inner_text()
    page.locator("#site-step .st-hyp").first.click()
    page.wait_for_function("() => document.querySelector('#site-step .st-maps').dataset.shown", timeout=30_000)
    assert page.locator("#site-step .st-maps canvas").count() >= 1
    page.locator("#site-step .st-why-ask").click()  # why this piece and not the next candidate: no server either
    page.wait_for_selector("#site-step .st-why-more", timeout=30_000)
    assert "occlusion" in page.locator("#site-step .st-why-more").evaluate("(d) => d.textContent")


@pytest.mark.parametrize("prefix", ["", "A young"])
def test_who_wrote_each_word_is_the_servers(page, shipped_translator, prefix):
    from lens.contributions import contributions
    from lens.explain import DecodingOptions

    for text in SENTENCES + val(3):
        args = [text, "greedy", 1, 1.0, 128, prefix, "auto"]
        ours = page.evaluate("(a) => window.attentionLens.callApi('contributions', a)", args)
        theirs = contributions(shipped_translator, text, DecodingOptions(1, 1.0, 128), prefix=prefix or None).to_dict()
        for key in ("source_tokens", "target_tokens", "input_tokens"):
            assert ours[key] == theirs[key], key
        for key in ("source", "target", "source_share", "source_share_by_layer", "encoder", "cross_attention"):
            assert np.allclose(ours[key], theirs[key], atol=2e-3), (
                key,
                np.abs(np.subtract(ours[key], theirs[key])).max(),
            )
        assert abs(ours["agreement"] - theirs["agreement"]) < 2e-3 and abs(ours["same_top"] - theirs["same_top"]) < 0.01


def mask_json(config, off: list[tuple[str, int, int]]) -> str:
    import json

    layers = {"encoder": config.n_encoder_layers, "decoder": config.n_decoder_layers, "cross": config.n_decoder_layers}
    mask = {kind: [[1] * config.n_heads for _ in range(n)] for kind, n in layers.items()}
    for kind, layer, head in off:
        mask[kind][layer][head] = 0
    return json.dumps(mask)


@pytest.mark.parametrize(
    "off",
    [[], [("cross", 2, 0), ("cross", 2, 1), ("cross", 2, 2), ("cross", 2, 3)], [("encoder", 0, 1), ("decoder", 1, 3)]],
)
def test_the_head_lab_translates_with_heads_off_as_the_server_does(page, shipped_translator, off):
    from lens.ablate import head_mask_from
    from lens.explain import DecodingOptions
    from ui.head_lab_data import ablation_payload

    config = shipped_translator.config
    options = DecodingOptions(num_beams=4, length_penalty=1.0, max_new_tokens=min(128, config.max_len))
    for text in ["Ein Mann isst in einem Restaurant zu Mittag.", *val(3)]:
        ours = page.evaluate("([t, m]) => window.attentionLens.headLab(t, m)", [text, mask_json(config, off)])
        theirs = ablation_payload(shipped_translator, text, head_mask_from(mask_json(config, off), config), options)
        for key in ("sentence", "original", "ablated", "changed", "head_mask", "diff", "left_out"):
            assert ours[key] == theirs[key], key
        assert ours["switched_off"] == [list(h) for h in off]
        a, b = ours["explanation"]["sentences"][0], theirs["explanation"]["sentences"][0]
        assert a["tokens"] == b["tokens"]
        L, H, T, S = config.n_decoder_layers, config.n_heads, len(a["tokens"]["tgt"]), len(a["tokens"]["src"])
        diff = np.abs(dequantize(a["maps"]["cross"], (L, H, T, S)) - dequantize(b["maps"]["cross"], (L, H, T, S)))
        assert diff.max() <= 2 / 255


def test_the_head_lab_opens_and_answers_a_click(page):
    page.click("#site-headlab > summary")
    page.wait_for_selector("#site-headlab-controls .hl-head", timeout=30_000)
    page.locator("#site-headlab-controls .hl-head").nth(0).click()  # encoder layer 1, head 1 off
    before = page.evaluate(
        "() => (document.querySelector('#site-headlab-result .hl-root') || {dataset: {}}).dataset.shown"
    )
    page.click("#site-headlab-go")
    page.wait_for_function(
        "(b) => { const r = document.querySelector('#site-headlab-result .hl-root');"
        " return r && !r.classList.contains('hl-empty') && r.dataset.shown !== b; }",
        arg=before,
        timeout=60_000,
    )
    assert page.locator("#site-headlab-result .hl-root").get_attribute("data-off") == "encoder:1:1"
    assert page.locator("#site-headlab-result canvas").count() >= 1
    bad = page.evaluate("() => window.attentionLens.headLab('', '[]')")
    assert "please enter a German sentence" in bad["error"]


def test_why_not_answers_in_the_page_with_the_servers_differences_and_occlusion(page, shipped_translator):
    import torch

    from lens.contrast import contrast, logit_difference
    from lens.explain import DecodingOptions, decode_one

    text, step = SENTENCES[0], 2
    greedy = DecodingOptions(1, 1.0, 128)
    ours = page.evaluate(
        "(a) => window.attentionLens.callApi('contrast', a)", [text, step, "young", "greedy", 1, 1.0, 128, "auto"]
    )
    theirs = contrast(shipped_translator, text, step, "young", greedy, steps=8).to_dict()
    for key in ("step", "chosen", "alternative", "source_tokens"):
        assert ours[key] == theirs[key], key
    assert abs(ours["logit_diff"] - theirs["logit_diff"]) < 2e-2
    assert abs(ours["baseline_logit_diff"] - theirs["baseline_logit_diff"]) < 2e-2
    for kind in ("encoder", "decoder", "cross"):
        assert np.allclose(ours["heads"][kind], theirs["heads"][kind], atol=2e-2), kind
    # occlusion, as the page computes it: each German piece's token embedding set to zero alone
    model, sentence = shipped_translator.model, decode_one(shipped_translator, text, greedy)
    src, prefix = torch.tensor([sentence.source_ids]), torch.tensor([sentence.input_ids[:step]])
    chosen, other = sentence.output_ids[step - 1], shipped_translator.tokenizer.token_to_id("\u0120young")
    with torch.no_grad():
        x = model.embed(src)
        rows = x.repeat(x.size(1), 1, 1)
        rows[torch.arange(x.size(1)), torch.arange(x.size(1))] = 0
        occluded = logit_difference(model, src, rows, prefix, chosen, other)
    assert ours["method"] == "occlusion"
    assert np.allclose(ours["source_attribution"], (theirs["logit_diff"] - occluded).tolist(), atol=2e-2)


def test_the_copy_lab_trains_in_the_page_and_its_cross_attention_turns_diagonal(page):
    page.click("#site-copylab > summary")
    page.select_option("#site-copylab-layers", "1")
    page.select_option("#site-copylab-width", "32")
    page.fill("#site-copylab-steps", "20")
    page.click("#site-copylab-go")  # the button's run: drawn by the app's copylab.js
    page.wait_for_function(
        "() => { const r = document.querySelector('#site-copylab-result .al-copylab');"
        " return r && r.dataset.done === 'true'; }",
        timeout=60_000,
    )
    assert page.locator("#site-copylab-result canvas").count() >= 1
    settings = {"n_layers": 1, "n_heads": 2, "d_model": 32, "lr": 0.005, "steps": 200}
    last = page.evaluate("(s) => window.attentionLens.copyLab(s)", settings)
    lab = page.locator("#site-copylab-result .al-copylab")
    assert (
        lab.get_attribute("data-done") == "true" and float(lab.get_attribute("data-last-loss")) == last["losses"][-1][1]
    )
    first, end = last["losses"][0][1], np.mean([loss for _, loss in last["losses"][-10:]])
    assert end < first - 1.0, (first, end)
    sentence = last["map"]["sentences"][0]
    S, T = len(sentence["tokens"]["src"]), len(sentence["tokens"]["tgt"])
    cross = dequantize(sentence["maps"]["cross"], (1, 2, T, S)).mean(axis=(0, 1))  # (T, S)
    assert S == T and np.trace(cross) / T > 0.5, cross.round(2)  # each letter written looks at its own letter
    bad = page.evaluate("(s) => window.attentionLens.copyLab(s)", {**settings, "n_layers": 9})
    assert "n_layers must be between 1 and 2" in bad["error"]


def test_patching_in_the_page_is_the_servers(page, shipped_translator):
    from lens.explain import DecodingOptions
    from lens.patching import patch

    clean, corrupted = "Ein Hund rennt über die Wiese.", "Eine Katze rennt über die Wiese."
    args = [clean, corrupted, 0, "greedy", 1, 1.0, 128, "auto"]
    ours = page.evaluate("(a) => window.attentionLens.callApi('patch', a)", args)
    theirs = patch(shipped_translator, clean, corrupted, 0, DecodingOptions(1, 1.0, 128)).to_dict()
    for key in ("step", "clean_piece", "corrupted_piece", "levels", "source_tokens", "corrupted_tokens"):
        assert ours[key] == theirs[key], key
    for key in ("clean_translation", "corrupted_translation"):
        assert ours[key] == theirs[key], key
    assert np.allclose(ours["recovered"], theirs["recovered"], atol=2e-2)
    for kind in ("encoder", "decoder", "cross"):
        assert np.allclose(ours["restored"][kind], theirs["restored"][kind], atol=2e-2), kind
    assert abs(ours["all"] - 1) < 1e-3 and abs(ours["none"]) < 1e-3
    assert [(h["kind"], h["layer"], h["head"]) for h in ours["top_heads"]][:1] == [
        (h["kind"], h["layer"], h["head"]) for h in theirs["top_heads"]
    ][:1]
    refused = page.evaluate(
        "(a) => window.attentionLens.callApi('patch', a).catch((e) => e.message)",
        [clean, "Ein Hund.", 0, "greedy", 1, 1.0, 128, "auto"],
    )
    assert "patching swaps vectors position by position" in refused


def test_time_travel_reads_each_snapshot_when_the_slider_first_shows_it(page, site_folder):
    from lens.explain import explain_text
    from lens.time_travel import cross_sharpness, find_snapshots
    from tests.test_site import CHECKPOINT
    from translation.snapshots import load_snapshot
    from ui.row_int8 import computing_with
    from ui.time_travel import DEFAULT_SENTENCE, reading_options

    folder, sizes = site_folder
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/snapshots/" in r.url else None)
    x = page.evaluate("(t) => window.attentionLens.travel(t)", DEFAULT_SENTENCE)
    snapshots = find_snapshots(str(CHECKPOINT))
    assert [s["step"] for s in x["snapshots"]] == [s.step for s in snapshots]
    assert x["snapshots"][-1]["translation"] and "explanation" not in x["snapshots"][0]  # the first not yet read
    assert sum("weights.safetensors" in u for u in asked) == 1  # the trained end only, fetched when shown
    x = page.evaluate("() => window.attentionLens.travelTo(1)")
    for i in (1, len(snapshots) - 1):
        reading = x["snapshots"][i]
        path = sorted((folder / "snapshots").glob(f"{i:02d}-*"))[0]
        model = computing_with(load_snapshot(str(CHECKPOINT), snapshots[i], device="cpu"), path / "weights.safetensors")
        model.no_repeat_ngram = 0  # a snapshot has no decoding rule of its own
        theirs = explain_text(model, x["text"], reading_options(x["text"], model.config.max_len))
        assert reading["translation"] == theirs.translation, i
        sharp = cross_sharpness(theirs.sentences[0].explanation.cross)
        assert np.allclose(reading["sharpness"], sharp, atol=2e-2), (reading["sharpness"], sharp)
    assert sizes["snapshots/index.json"] and sum(n for k, n in sizes.items() if k.startswith("snapshots/")) > 30 * 2**20


def test_compare_shows_each_sentence_by_the_other_model_beside_the_page(pair_page):
    from tests.test_site import everyday_of

    page, asked, folder = pair_page
    everyday = everyday_of(folder)
    text = "Ein Mann fährt Fahrrad."
    second = page.evaluate("(t) => window.attentionLens.compare(t, {num_beams: 1})", text)
    assert second["sentences"][0]["route"]["model"] == "everyday"
    assert second["sentences"][0]["translation"] == everyday.translate(text, num_beams=1)
    assert any("everyday/weights.safetensors" in u for u in asked)  # fetched when the view opened
    assert page.locator("#site-second").is_visible() and page.locator("#site-second-result canvas").count() >= 1
    assert page.evaluate("() => document.body.classList.contains('al-comparing')")  # the picture waits
    page.uncheck("#site-compare")
    assert not page.locator("#site-second").is_visible()


def test_the_walk_visits_every_stop_on_the_site_opening_its_views(page):
    stops = page.evaluate("() => window.attentionLens.walk()")
    assert len(stops) >= 27 and "evidence" not in [s["view"] for s in stops]  # no training data in the page
    header = page.locator("#site-header .al-tour-start")
    assert f"({len(stops)} stops)" in header.inner_text()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    seen = {}
    for i, stop in enumerate(stops):
        page.evaluate("(i) => window.attentionLens.walkTo(i)", i)
        card = page.locator(".al-tour")
        assert card.is_visible() and card.get_attribute("data-stop") == str(i + 1)
        seen[stop["view"]] = page.evaluate("() => [...document.querySelectorAll('.site-view[open]')].map((d) => d.id)")
    assert "site-step" in seen["step"] and "site-headlab" in seen["headlab"] and "site-history" in seen["history"]
    page.wait_for_function(
        "() => { const h = document.querySelector('#site-history .al-history'); return h && h.dataset.ready === 'true'; }",
        timeout=60_000,
    )
    page.keyboard.press("Escape")
    assert not page.locator(".al-tour").count() and errors == [], errors
