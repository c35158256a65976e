"""No dead control in the picture's whole-model list: on both front doors (the app and the static site) each block is
clicked in turn and something opens (a view, a panel, a dialog, the second model), and the list's count is its
number of blocks."""

import json
import re
from pathlib import Path

import pytest

from tests.test_site import pytestmark  # noqa: F401  (browser)
from tests.test_ui_page import browser, open_page, server, translate  # noqa: F401  (fixtures)

SENTENCE = "Ein Mann fährt Fahrrad."
MESSAGES = Path(__file__).resolve().parents[1] / "ui" / "static" / "messages" / "en.json"
COMPARE = json.loads(MESSAGES.read_text(encoding="utf-8"))["spine.compare_name"]
SIGNATURE = """() => {
  const st = window.attentionLens.state ? window.attentionLens.state() : {};
  const panel = document.querySelector('#result .al-ladder-panel, #site-result .al-ladder-panel');
  const tick = document.querySelector('#compare input, #site-compare');
  const evidence = document.querySelector('.al-evidence');
  return JSON.stringify({ view: st.view, dialog: !!document.querySelector('dialog[open]'),
    panel: panel ? panel.firstElementChild && panel.firstElementChild.className : null,
    compare: !!(tick && tick.checked), open: [...document.querySelectorAll('details[open]')].map((d) => d.id),
    evidence: evidence ? Math.round(evidence.getBoundingClientRect().top) : null });
}"""


def click_every_block(page, root: str) -> list[str]:
    toggle = page.locator(f"{root} .al-spine-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    blocks = page.locator(f"{root} .al-spine-whole .al-b-view")
    count = blocks.count()
    assert count >= 6
    assert re.search(rf"\b{count}\b", toggle.inner_text()), toggle.inner_text()  # the list counts its own blocks
    names = [blocks.nth(i).get_attribute("data-name") for i in range(count)]
    names.sort(key=lambda n: n == COMPARE)  # the second model last: it lays the page out anew
    dead = []
    for name in names:
        before = page.evaluate(SIGNATURE)
        page.locator(f"{root} .al-spine-whole .al-b-view[data-name={json.dumps(name)}]").click()
        try:
            page.wait_for_function(f"(b) => ({SIGNATURE})() !== b", arg=before, timeout=15_000)
        except Exception:  # noqa: BLE001 - nothing changed: a dead control
            dead.append(name)
        page.keyboard.press("Escape")  # a dialog closed again
        if page.locator(f"{root} .al-spine-toggle").get_attribute("aria-expanded") != "true":
            page.locator(f"{root} .al-spine-toggle").click()
    return dead


@pytest.mark.slow
def test_every_block_of_the_list_opens_something_in_the_app(browser, server):  # noqa: F811
    page = open_page(browser, server, closed=True)
    translate(page, SENTENCE)
    assert click_every_block(page, "#result") == []
    page.close()


@pytest.mark.slow
def test_every_block_of_the_list_opens_something_on_the_site(site, browser):  # noqa: F811
    url, _ = site
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    page.wait_for_selector("#site-result .al-spine-whole", state="attached", timeout=60_000)
    assert click_every_block(page, "#site-result") == []
    page.close()
