"""ui.standalone.show: one translation drawn outside the app, in a notebook cell or a saved file, by the page's own
viewer: self-contained (no server, no network), drawn in headless Chromium."""

import os
import re

import pytest

from ui.app_process import CHROMIUM, chromium
from ui.payload import dequantize
from ui.standalone import show

TEXT = "Ein Mann fährt Fahrrad. Zwei Hunde spielen im Schnee."


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    with chromium() as browser:
        yield browser


def drawn(browser, html: str) -> tuple[dict, list]:
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route(
        "**/*",
        lambda route: route.abort() if not route.request.url.startswith(("data:", "about:")) else route.continue_(),
    )  # nothing may be fetched: the cell is self-contained
    page.set_content(html)
    page.wait_for_function(
        "() => { const r = window.attentionLens && window.attentionLens.view('translate'); return r && r.viewer.map; }"
    )
    page.locator(".al-spine-decoder .al-b-layer").last.click()  # the picture opens the last layer (the map shown)
    page.get_by_role("button", name="Pieces", exact=True).click()  # one row per piece, as the payload has them
    state = page.evaluate("""() => { const r = document.querySelector('.al-show'), v = window.attentionLens.view('translate').viewer;
        const hidden = (s) => [...r.querySelectorAll(s)].every((b) => getComputedStyle(b).display === 'none');
        return {sentences: v.explanation.sentences.length, values: Array.from(v.map.values),
                rows: v.map.rows, cols: v.map.cols, buttonsHidden: hidden('.al-open-cell, .al-open-ladder'),
                buttons: r.querySelectorAll('.al-open-cell, .al-open-ladder').length,
                picture: r.querySelectorAll('[aria-label*="Architecture"] .al-b-layer').length,
                panelsOff: [...r.querySelectorAll('.al-spine [data-opens]')].map((b) => b.disabled),
                fonts: getComputedStyle(r.querySelector('.al-block-title')).fontWeight}; }""")
    page.close()
    return state, errors


def test_a_cell_draws_the_translation_with_the_pages_viewer_and_fetches_nothing(browser, tiny_translator):
    shown = show(tiny_translator, TEXT)
    state, errors = drawn(browser, shown._repr_html_())
    assert errors == [] and state["sentences"] == 2
    first = shown.payload["sentences"][0]
    L, H = shown.payload["layers"]["cross"], shown.payload["heads"]
    T, S = len(first["tokens"]["tgt"]), len(first["tokens"]["src"])
    cross = dequantize(first["maps"]["cross"], (L, H, T, S))
    expected = cross[L - 1].mean(0)  # the viewer opens on the last layer's mean of heads
    assert (state["rows"], state["cols"]) == (T, S)
    assert max(abs(a - b) for a, b in zip(state["values"], expected.ravel())) < 1e-3
    assert state["buttons"] > 0 and state["buttonsHidden"]  # no server to ask: hidden
    # the page's picture of the model, with the page's stylesheet; its blocks that would ask the model are off
    assert state["picture"] == L + shown.payload["layers"]["encoder"] and state["fonts"] == "600"
    assert state["panelsOff"] and all(state["panelsOff"])


def test_with_a_server_the_buttons_that_ask_the_model_are_shown(browser, tiny_translator):
    state, errors = drawn(browser, show(tiny_translator, TEXT, server="http://127.0.0.1:7860/")._repr_html_())
    assert errors == [] and not state["buttonsHidden"] and not any(state["panelsOff"])


def test_text_that_closes_a_script_cannot_break_out_and_a_saved_file_is_a_whole_page(tiny_translator, tmp_path):
    shown = show(tiny_translator, "Ein </script><script>alert(1)</script> Hund.")
    html = shown._repr_html_()
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert len(scripts) == 1 and "<\\/script>" in scripts[0]
    saved = shown.save(tmp_path / "dog.html").read_text(encoding="utf-8")
    assert saved.startswith("<!doctype html>") and saved.rstrip().endswith("</html>") and html.split('id="')[0] in saved
