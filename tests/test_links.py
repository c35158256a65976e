"""Crafted links (walk.js readLink): a fuzz over every key of the fragment in Chromium against app.py. Each link
either restores the page (its sentence translated) or leaves out what it cannot use, with no uncaught page error and
nothing of it run as markup."""

from urllib.parse import quote

import pytest

from tests.test_site import pytestmark  # noqa: F401  (browser)
from tests.test_ui_page import browser, server  # noqa: F401  (fixtures)

SENTENCE = "Ein Hund rennt."
KEYS = ("view", "kind", "display", "level", "panel", "model", "layer", "head", "step", "compare", "whole")
HOSTILE = ("__proto__", "constructor", '"]x[a="', "-1", "1e308", "NaN", "<img src=x onerror=window.hit=1>", "9" * 3000)


def open_link(browser, server, fragment: str):  # noqa: F811
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "#" + fragment)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.state", timeout=60_000)
    return page, errors


@pytest.mark.slow
def test_every_key_of_a_crafted_link_is_used_or_left_out_with_no_page_error(browser, server):  # noqa: F811
    for value in HOSTILE:
        fragment = f"s={quote(SENTENCE)}&" + "&".join(f"{key}={quote(value)}" for key in KEYS)
        page, errors = open_link(browser, server, fragment)
        page.wait_for_function(f"() => window.attentionLens.state().sentence === {SENTENCE!r}", timeout=60_000)
        page.wait_for_timeout(500)  # what the link sets after the translation
        assert errors == [], (value[:40], errors)
        assert page.evaluate("() => window.hit === undefined") and page.locator("img[src=x]").count() == 0
        page.close()
    for sentence in ("<img src=x onerror=window.hit=1>", "Ein Hund " * 700):
        page, errors = open_link(browser, server, "s=" + quote(sentence) + "&layer=2&kind=encoder")
        page.wait_for_function("() => document.querySelector('#source textarea').value.length > 0", timeout=60_000)
        page.wait_for_timeout(1500)
        assert errors == [] and page.evaluate("() => window.hit === undefined"), errors
        assert page.locator("img[src=x]").count() == 0
        page.close()
