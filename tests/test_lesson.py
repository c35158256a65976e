"""The page as one lesson on a picture of the model (ui/static/spine.js, walk.js, tour.js), in Chromium against
app.py with the shipped checkpoint: the picture drawn from the config, every block opening its view on the
page's sentence, a first visit that fits, and a walk over everything that can be left as it was found."""

import json

from tests.test_steps_page import IDS
from tests.test_ui_page import CHECKPOINT, CHROMIUM, browser, open_page, pytestmark, server, translate  # noqa: F401  (fixtures)

SENTENCE = "Ein Mann mit einem roten Hut fährt Fahrrad."
MARKERS = ("\u0120", "\u2581", "</w>", "@@")  # tokenizer markers a reader must never see
ABOVE_THE_FOLD = """() => [...document.querySelectorAll('button, input:not([type=hidden]), select, textarea, a[href]')]
  .filter((e) => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && r.top < innerHeight && r.bottom > 0; }).length"""
SCREENS = "() => document.documentElement.scrollHeight / innerHeight"
PRESSED = """(root) => [...document.querySelectorAll(root + ' .al-spine .al-block-title')]
  .filter((t) => t.getBoundingClientRect().width > 0 && t.scrollWidth > t.parentElement.clientWidth + 1)
  .map((t) => t.textContent)"""  # block titles wider than their block: drawn over their neighbours
WIDEST = "() => document.documentElement.scrollWidth - innerWidth"


def arrived(browser, server, width=1366, height=768):
    page = open_page(browser, server, width, height, closed=True)
    page.wait_for_selector("#result .al-spine .al-block", timeout=60_000)
    page.wait_for_timeout(300)  # the page settles (fonts, the viewer's first draw)
    return page


def whole_model(page):
    """The picture's whole-model views, behind one button."""
    toggle = page.locator(".al-spine .al-spine-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def translated(page, text=SENTENCE):
    before = page.locator("#result .al-result").get_attribute("data-shown")
    page.locator("#source textarea").fill(text)
    page.click("#translate")
    page.wait_for_function(
        "(b) => { const r = document.querySelector('#result .al-result');"
        " return r.dataset.shown && r.dataset.shown !== b && !r.classList.contains('al-busy'); }",
        arg=before,
        timeout=60_000,
    )


def test_the_picture_is_the_models_own_shape_and_every_block_is_a_named_button(browser, server):
    page = arrived(browser, server)
    config = json.loads((CHECKPOINT / "config.json").read_text())
    picture = page.locator("[aria-label*='Architecture']")
    assert picture.count() == 1 and picture.is_visible()
    L, M = config["n_encoder_layers"], config["n_decoder_layers"]
    assert page.locator(".al-spine-encoder .al-b-layer").count() == L
    assert page.locator(".al-spine-decoder .al-b-layer").count() == M
    names = page.eval_on_selector_all(".al-spine .al-block", "bs => bs.map(b => [b.tagName, b.dataset.name])")
    # input, embedding, layers, memory or softmax; the whole-model views (the lab among them), the code and the glossary
    assert len(names) == (L + 3) + (M + 3) + 8 + 2
    assert all(tag == "BUTTON" and label for tag, label in names)
    assert len({label for _, label in names}) == len(names)  # each block says what it is
    # live figures of the page's sentence: the output's word and probability, where cross-attention looks
    assert "%" in page.locator(".al-spine .al-b-out").inner_text()
    assert "\u2192" in page.locator(".al-spine-decoder .al-b-layer").first.inner_text()
    for layer in range(1, M + 1):  # a layer opens into its sublayers, in place under the picture
        page.click(f".al-spine [data-name='Decoder layer {layer}']")
        assert page.locator(".al-spine-detail .al-block").count() == 4  # the sublayers and the logit lens
        assert page.locator(".al-spine-detail .al-b-cross").count() == 1
        assert page.locator(".al-spine-detail .al-step-link").count() == 8  # the steps inside it, cross-attention too
    page.click(".al-spine [data-name='Encoder layer 1']")
    assert page.locator(".al-spine-detail .al-block").count() == 2
    steps = page.eval_on_selector_all(".al-spine-detail .al-step-link", "(bs) => bs.map((b) => b.dataset.step)")
    inside_a_layer = [i for i in IDS if i not in ("tokens", "embedding", "positional-encoding", "logits-softmax")]
    assert steps == [i for i in inside_a_layer if i != "cross-attention"]  # the paper's order; no bridge in an encoder
    page.click(".al-spine-detail .al-step-link[data-step='scores']")
    page.wait_for_selector("#result [data-concept='scores'] .al-step-matrix", timeout=60_000)
    assert page.locator(".al-spine .al-block.al-lit").count() == 1  # encoder layer 1, lit; the rest dimmed
    page.close()


def test_a_first_visit_shows_the_picture_and_a_map_on_few_screens_and_few_controls(browser, server):
    page = arrived(browser, server)
    controls, screens = page.evaluate(ABOVE_THE_FOLD), page.evaluate(SCREENS)
    assert controls <= 20 and screens <= 2.5, (controls, screens)
    assert page.locator("#view-step").is_hidden() and page.locator("#view-headlab").is_hidden()
    stage = page.locator("#result .al-stage").bounding_box()
    assert stage["y"] < 768, stage  # the first map starts on the first screen
    page.close()
    phone = arrived(browser, server, 390, 844)
    stage = phone.locator("#result .al-stage").bounding_box()
    assert 844 - stage["y"] >= 200, stage  # at least 200 px of the first map on the first screen
    assert phone.evaluate(ABOVE_THE_FOLD) <= 12
    assert phone.evaluate(WIDEST) <= 0  # nothing wider than the screen
    flow = phone.locator(".al-spine-decoder .al-spine-flow").bounding_box()
    assert flow["height"] > flow["width"], flow  # the picture drawn vertically: its blocks one under another
    phone.close()


def test_every_block_title_fits_its_block_alone_beside_the_other_model_and_on_a_phone(browser, server):
    """The picture keeps its words legible wherever it is drawn: in a line across the page and on a phone; while two
    models are compared it waits (the two sides alike: tests/test_learner_fixes.py) and comes back after."""
    from playwright.sync_api import expect

    for width, height in ((1366, 768), (390, 844)):
        page = arrived(browser, server, width, height)
        assert page.evaluate(PRESSED, "#result") == [], width
        translate(page, "Wo ist der Bahnhof?")
        page.locator("#result .al-see-other").click()  # the other model's answer beside (below on a phone)
        expect(page.locator("#compare input")).to_be_checked()
        page.locator("#second-result .al-english").wait_for(timeout=60_000)
        assert page.evaluate(PRESSED, "#result") == [], width
        page.wait_for_function("() => document.body.classList.contains('al-comparing')", timeout=60_000)
        assert page.locator("#result .al-spine").is_hidden()
        page.locator("#result .al-see-other").click()  # "Hide the other model's answer": the picture is back
        page.wait_for_function("() => !document.body.classList.contains('al-comparing')", timeout=60_000)
        assert page.locator("#result .al-spine").is_visible() and page.evaluate(PRESSED, "#result") == [], width
        tops = page.eval_on_selector_all(
            "#result .al-spine-encoder .al-spine-flow > .al-block", "bs => bs.map(b => b.getBoundingClientRect().top)"
        )
        assert (len(set(tops)) == 1) == (width > 800), (
            width,
            tops,
        )  # a line on a desktop, one under another on a phone
        page.close()


def test_every_block_opens_its_view_for_the_pages_sentence(browser, server):
    page = arrived(browser, server)
    translated(page)
    page.click(".al-spine [data-name='Decoder layer 2']")
    page.click(".al-spine [data-name='Decoder layer 2 cross-attention to the German']")
    page.wait_for_selector("#result .al-who-table", timeout=60_000)
    state = page.evaluate("() => window.attentionLens.state()")
    assert state["kind"] == "cross" and state["layer"] == 2
    page.click(".al-spine [data-name='Encoder layer 1']")
    page.click(".al-spine [data-name='Encoder layer 1 self-attention']")
    assert page.evaluate("() => window.attentionLens.state().kind") == "encoder"
    page.click(".al-spine [data-name='Decoder layer 3']")
    page.click(".al-spine-detail [data-opens='openLadder']")
    page.wait_for_selector("#result .al-ladder-table", timeout=60_000)
    page.click('.al-spine [data-name="Output layer and softmax: the next piece\'s probabilities"]')
    page.wait_for_selector("#result [data-concept='logits-softmax'] .al-step-bar", timeout=60_000)
    for block, view in (
        ("Step through the decoding", "step"),
        ("Head lab: switch heads off", "headlab"),
        ("Time travel through training", "history"),
    ):
        whole_model(page)
        page.click(f".al-spine [data-name='{block}']")
        page.wait_for_function(f"() => window.attentionLens.state().views.{view} === {SENTENCE!r}", timeout=90_000)
        assert page.evaluate("() => window.attentionLens.state().view") == view
    text = page.locator("body").inner_text()
    assert not any(marker in text for marker in MARKERS)
    page.close()


def test_the_walk_covers_every_view_and_esc_leaves_the_page_as_it_was(browser, server):
    page = arrived(browser, server)
    stops = page.evaluate("() => window.attentionLens.walk()")
    views = {s["view"] for s in stops}
    assert len(stops) >= 12 and {"step", "headlab", "history", "copylab", "who", "ladder", "patching", "code"} <= views
    concepts = [s["concept"] for s in stops if s["concept"]]
    ids = page.evaluate("() => window.attentionLens.concepts().map((c) => c.id)")
    assert sorted(concepts) == sorted(ids)  # a stop for each of the twelve steps
    assert sum(s["guess"] for s in stops if s["concept"]) >= 6
    page.click(".al-spine [data-name='Decoder layer 2']")  # the visitor's own choice, which Esc must bring back
    page.click(".al-spine [data-name='Decoder layer 2 masked self-attention']")
    before = page.evaluate("() => window.attentionLens.state()")
    page.click(".al-tour-start")
    for _ in range(20):
        page.click(".al-tour-next")  # into the step-through
    assert page.locator("#view-step").is_visible()
    page.keyboard.press("Escape")
    after = page.evaluate("() => window.attentionLens.state()")
    assert {k: after[k] for k in ("kind", "layer", "head", "display", "level")} == {
        k: before[k] for k in ("kind", "layer", "head", "display", "level")
    }
    assert page.locator("#view-step").is_hidden()  # closed again, as the visitor had it
    assert after["panel"] is None and before["kind"] == "decoder"  # the panels the walk opened are closed too
    start = page.locator(".al-tour-start")
    assert "stop 21 of" in start.inner_text()  # left at stop 21: the header's button resumes there
    start.click()
    assert page.locator(".al-tour").get_attribute("data-stop") == "21"
    page.keyboard.press("Escape")
    page.close()


def test_every_open_panel_lives_in_the_link_and_each_scale_has_its_legend(browser, server):
    page = arrived(browser, server)
    translated(page)
    whole_model(page)
    page.click(".al-spine [data-name='Decoder layer 2']")
    page.click(".al-spine [data-name='Decoder layer 2 cross-attention to the German']")
    page.wait_for_selector("#result .al-who-table", timeout=60_000)
    assert page.locator("#result .al-who .al-legend-amount").count() == 1  # the maps' own scale, named
    page.wait_for_function("() => location.hash.includes('panel=who') && location.hash.includes('whole=1')")
    link = page.url
    page.close()
    again = browser.new_page(viewport={"width": 1366, "height": 768})
    again.goto(link)
    again.wait_for_selector("#result .al-who-table", timeout=90_000)  # the panel opened again, for the link's sentence
    state = again.evaluate("() => window.attentionLens.state()")
    assert state["panel"] == "who" and state["whole"] and state["kind"] == "cross" and state["layer"] == 2
    assert state["sentence"] == SENTENCE
    again.click(".al-spine [data-name='Patching: which heads carry a word']")
    again.wait_for_selector("#result .al-patch-grid", timeout=90_000)
    assert again.locator("#result .al-patch .al-legend-signed").count() == 1  # the one diverging scale, named
    again.wait_for_function("() => location.hash.includes('panel=patch')")
    again.close()


def test_the_compare_tick_lives_in_the_link(browser, server):
    from urllib.parse import quote

    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(server + "#s=" + quote("Ich möchte ein Bier.") + "&compare=1")
    page.wait_for_function(
        "() => { const r = document.querySelector('#second-result .al-result'); return r && r.dataset.shown; }",
        timeout=90_000,
    )
    assert page.evaluate("() => window.attentionLens.state().compare") is True
    assert "compare=1" in page.url
    page.locator("#result .al-see-other").click()  # "Hide the other model's answer"
    page.wait_for_function("() => !location.hash.includes('compare=1')", timeout=10_000)
    page.close()


def test_the_walk_asks_for_a_guess_before_four_reveals_and_keeps_the_score(browser, server):
    page = arrived(browser, server)
    stops = page.evaluate("() => window.attentionLens.walk()")
    assert sum(s["guess"] for s in stops) >= 4
    page.click(".al-tour-start")
    for _ in range(13):
        page.click(".al-tour-next")  # stop 14: cross-attention, with its guess
    assert page.locator(".al-tour-question").inner_text().startswith("Guess first")
    assert page.locator(".al-tour-text").is_hidden() and page.locator(".al-tour-hidden").count() == 1  # the map waits
    choices = page.locator(".al-tour-choice")
    assert choices.count() >= 2
    choices.first.click()
    assert "of 1 right" in page.locator(".al-tour-score").inner_text()
    assert page.locator(".al-tour-text").is_visible() and page.locator(".al-tour-hidden").count() == 0
    assert page.locator(".al-tour-right").count() == 1  # the answer is shown, right or wrong
    page.keyboard.press("Escape")
    page.close()
