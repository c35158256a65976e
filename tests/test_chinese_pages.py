"""The Chinese model on both front doors: the static site's page translates 40 Chinese dev sentences as Python does
with the weights it ships (int8), its maps to 1e-3; Traditional characters are read as Simplified; and every view
opens with a Chinese sentence in the app and on the site (the door's script of tests/test_door.py)."""

from pathlib import Path

import numpy as np
import pytest

from lens.maps import explain
from tests.test_chinese import corpus, split_lines  # noqa: F401  (the corpus fixture)
from tests.test_door import NAMES, SCRIPT, SHOWS, open_site
from tests.test_site import pytestmark  # noqa: F401  (browser)
from tests.test_ui_page import browser, open_page, server, translate  # noqa: F401  (fixtures)

CHINESE = Path(__file__).resolve().parents[1] / "checkpoints" / "zh-en"
needs_chinese = pytest.mark.skipif(not (CHINESE / "model.safetensors").is_file(), reason="no checkpoints/zh-en")
SENTENCE = "我想要一杯啤酒。"


@pytest.fixture(scope="module")
def chinese_translator(site_folder):
    """The Chinese checkpoint computing with the weights the site ships for it, as the page does."""
    from translation import Translator
    from ui.row_int8 import computing_with

    folder, _ = site_folder
    return computing_with(Translator.from_pretrained(CHINESE, device="cpu"), folder / "zh-en" / "weights.safetensors")


@pytest.fixture(scope="module")
def site_page(site, browser):  # noqa: F811
    page, errors = open_site(browser, site[0])
    yield page
    page.close()
    assert errors == []


@needs_chinese
def test_the_page_translates_chinese_as_python_does(site_page, chinese_translator, corpus):  # noqa: F811
    sentences = split_lines(corpus, "dev", "zh")[:40]
    expected = chinese_translator.translate(sentences, num_beams=1)
    worst = 0.0
    for text, english in zip(sentences, expected):
        payload = site_page.evaluate(
            "(t) => window.attentionLens.translate(t, {num_beams: 1, max_new_tokens: null})", text
        )
        assert payload["translation"] == english and payload["sentences"][0]["route"]["model"] == "zh-en", text
        maps = site_page.evaluate("() => window.attentionLens.maps()")[0]
        server = explain(chinese_translator, text, num_beams=1)
        for kind in ("encoder", "decoder", "cross"):
            ours = getattr(server, kind)
            worst = max(worst, float(np.abs(np.asarray(maps[kind]).reshape(ours.shape) - ours).max()))
    assert worst < 1e-3, worst


@needs_chinese
def test_traditional_characters_are_read_as_simplified_in_the_page(site_page, chinese_translator):
    payload = site_page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 1})", "我們昨天去了商店.")
    route = payload["sentences"][0]["route"]
    assert route["model"] == "zh-en" and ["們", "们"] in route["recased"]
    assert payload["translation"] == chinese_translator.translate("我们昨天去了商店。", num_beams=1)
    assert "们" in site_page.locator("#site-result .al-recased").inner_text()
    assert payload["sentences"][0]["tokens"]["src"][:3] == ["我", "们", "昨"]  # whole characters on the map


def every_view_opens(page) -> dict:
    answer = page.evaluate(SCRIPT, [[n for n in NAMES if n != "compare"], SHOWS])
    assert answer["refused"] and all(answer["seen"][name] > 0 for name in SHOWS), answer
    views = answer["state"]["views"]
    assert views["step"] == SENTENCE and views["headlab"] == SENTENCE and views["history"] == SENTENCE, views
    return answer


@needs_chinese
@pytest.mark.slow
def test_every_view_opens_with_a_chinese_sentence_on_the_site(site_page):
    site_page.evaluate("(text) => window.attentionLens.translate(text, {num_beams: 4})", SENTENCE)
    every_view_opens(site_page)
    history = site_page.evaluate("() => window.attentionLens.view('history').data")
    assert any("zh-en/snapshots" in u for u in site_page.evaluate("() => performance.getEntries().map((e) => e.name)"))
    assert history["snapshots"][-1]["translation"]  # read by the Chinese model's own snapshots


@needs_chinese
@pytest.mark.slow
def test_every_view_opens_with_a_chinese_sentence_in_the_app(browser, server):  # noqa: F811
    page = open_page(browser, server, closed=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    translate(page, SENTENCE)
    assert "Chinese model" in page.locator("#result .al-route").inner_text()
    assert "Chinese pieces" in page.locator("#result").inner_text()  # the lesson names the sentence's language
    every_view_opens(page)
    assert errors == []
    page.close()


@needs_chinese
def test_the_chinese_models_translations_are_said_in_its_card():
    card = (CHINESE / "README.md").read_text(encoding="utf-8")
    assert "Tatoeba" in card and "CC-BY 2.0 FR" in card


@needs_chinese
def test_the_sites_examples_include_chinese_and_translate_it(site, browser, chinese_translator):  # noqa: F811
    site_page, errors = open_site(browser, site[0])  # a fresh page: the views test leaves the glossary open
    example = site_page.locator(".site-example[lang=zh]").first
    text = example.inner_text()
    before = site_page.evaluate("() => document.querySelector('#site-result .al-result').dataset.shown")
    example.click()
    site_page.wait_for_function(
        "(b) => { const r = document.querySelector('#site-result .al-result'); return r.dataset.shown && r.dataset.shown !== b; }",
        arg=before,
        timeout=60_000,
    )
    assert site_page.input_value("#site-source") == text
    shown = site_page.locator("#site-result .al-english").inner_text()
    assert shown.strip() == chinese_translator.translate(text, num_beams=4, length_penalty=1.4).strip()
    site_page.close()
    assert errors == []
