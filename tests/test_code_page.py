"""The Code view in the page (ui/static/code.js) against app.py on the shipped checkpoints, in Chromium: for three
sentences of different lengths each tapped line carries the shape the model's tap sees (lens/code.py), the layer
selector refills the lines, and the tutorials' three questions point at their lines."""

import re

from tests.test_ui_page import (  # noqa: F401  (fixtures)
    browser,
    open_page,
    pytestmark,  # noqa: F401  (the same skips)
    server,
)

SENTENCES = ["Ein Hund.", "Ich möchte ein Bier.", "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau."]
SHAPES = """() => Object.fromEntries([...document.querySelectorAll('#result .al-code-line[data-tap]')]
  .flatMap((l) => l.dataset.tap.split(' ').map((tap, i) => [l.dataset.line + ' ' + tap, l.dataset.shape.split(' ')[i]])))"""


def open_code(page, text: str) -> None:
    page.fill("#source textarea", text)
    page.click("#translate")
    page.wait_for_function(f"() => window.attentionLens.state().views.translate === {text!r}", timeout=60_000)
    page.locator("#result [data-view='openCode']").dispatch_event("click")  # as the picture's item presses it
    page.wait_for_selector("#result .al-code-view", timeout=60_000)


def test_each_tapped_line_shows_the_shape_the_model_sees_for_three_sentences(browser, server, shipped_pair):
    from lens.explain import DecodingOptions
    from ui import api

    table = {e.name: e for e in api.endpoint_table(shipped_pair, api.model_calls(shipped_pair))}
    page = open_page(browser, server)
    for text in SENTENCES:
        open_code(page, text)
        drawn = page.evaluate(SHAPES)
        expected = {
            f"{tap['line']} {tap['tap']}": "\u00d7".join(map(str, tap["shape"]))
            for tap in table["code"].handler(text, 1, DecodingOptions(num_beams=4, max_new_tokens=128))["taps"]
        }
        assert drawn == expected, text
    page.close()


def test_the_layer_selector_and_the_three_questions(browser, server):
    page = open_page(browser, server)
    open_code(page, SENTENCES[1])
    assert sorted(page.eval_on_selector_all("[data-question]", "(qs) => qs.map((q) => q.dataset.question)")) == [
        "layernorm",
        "pe-shape",
        "qkv",
    ]
    pe = page.inner_text("[data-question='pe-shape']")
    assert re.search(r"1×\d+×256", pe), pe  # (batch × pieces × d_model) for this sentence
    page.click("[data-question='qkv'] .al-code-goto")
    here = page.locator("#result .al-code-here")
    assert "def project_qkv" in here.inner_text()
    page.locator("#result .al-code-layers .al-choice", has_text="3").click()
    page.wait_for_selector("#result .al-code-layers .al-choice[aria-pressed='true']:text('3')", timeout=60_000)
    assert page.get_attribute("#result .al-code-line[data-tap~='encoder.{i}.ff.hidden']", "title").startswith(
        "encoder.2.ff.hidden"
    )
    page.close()


def test_a_line_opens_its_step_and_the_step_comes_back_to_its_line(browser, server, shipped_pair):
    """On the app (the numbers from the server's /taps): a tapped line opens its step of the picture, and the
    step's "The code" brings the Code view back to that line."""
    page = open_page(browser, server)
    open_code(page, SENTENCES[1])
    line = page.locator("#result .al-code-line[data-tap~='encoder.{i}.ff.hidden']")
    assert line.get_attribute("data-step") == "feed-forward"
    line.locator(".al-code-step").click()
    page.wait_for_selector("#result [data-concept='feed-forward'] .al-concept-taps", timeout=60_000)
    assert "encoder.0.ff.hidden" in page.inner_text("#result [data-concept='feed-forward'] .al-concept-taps")
    page.click(
        "#result [data-concept='feed-forward'] [data-choice], #result [data-concept='feed-forward'] "
        ".al-concept-choices .al-choice:text-is('2')"
    )  # layer 2
    page.wait_for_selector(
        "#result [data-concept='feed-forward'] .al-concept-taps:has-text('encoder.1.ff.hidden')", timeout=60_000
    )
    page.click("#result [data-concept='feed-forward'] .al-concept-code")
    here = page.wait_for_selector("#result .al-code-here", timeout=60_000)
    assert "encoder.{i}.ff.hidden" in (here.get_attribute("data-tap") or "")
    assert page.get_attribute("#result .al-code-layers .al-choice[aria-pressed='true']", "aria-pressed") == "true"
    assert page.inner_text("#result .al-code-layers .al-choice[aria-pressed='true']") == "2"
    page.close()


def test_the_encoders_feed_forward_block_opens_the_feed_forward_step(browser, server):
    page = open_page(browser, server)
    shown = "() => (document.querySelector('#result .al-spine') || {dataset: {}}).dataset.shown || ''"
    before = page.evaluate(shown)
    page.fill("#source textarea", SENTENCES[2])
    page.click("#translate")
    page.wait_for_function(f"() => ({shown})() !== {before!r}", timeout=60_000)  # the picture of the new answer
    page.click("#result .al-spine [data-name='Encoder layer 1']")
    page.click("#result .al-spine-detail .al-b-ff")
    page.wait_for_selector("#result [data-concept='feed-forward'] .al-step-note", timeout=60_000)
    assert "ReLU set" in page.inner_text("#result [data-concept='feed-forward']")
    page.close()
