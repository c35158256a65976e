"""Accessibility, checked by axe-core (npm, the engine of Lighthouse's and Deque's audits) in Chromium: no serious or
critical violation on the app's first screen, on the static site's, or with any of the picture's twelve steps open
(on a phone, one step of each kind of drawing), at a desktop's and a phone's size; the map reads out cell by cell with the arrow keys and has its numbers as a
table; a step's tables walk with the arrow keys too."""

from pathlib import Path

import pytest

from tests.test_steps_page import IDS
from tests.test_ui_page import browser, open_page, pytestmark, server  # noqa: F401

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
SIZES = [(1366, 768), (390, 844)]
RUN = """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
  .filter((v) => ['serious', 'critical'].includes(v.impact))
  .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(', ')}`)"""


def violations(page) -> list[str]:
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN)


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_the_first_screen_and_every_step_have_no_serious_violation(browser, server, size):  # noqa: F811
    page = open_page(browser, server, *size, closed=True)
    page.wait_for_selector("#result .al-spine .al-block", timeout=60_000)
    page.wait_for_timeout(300)
    assert violations(page) == []
    # every step on a desktop; on a phone the steps of each kind of drawing (chips, strips, tables, the bridge, bars)
    for concept in (
        IDS if size[0] > 800 else ["tokens", "positional-encoding", "scores", "cross-attention", "logits-softmax"]
    ):
        page.evaluate("(id) => window.attentionLens.concepts().find((c) => c.id === id).open()", concept)
        page.wait_for_selector(f"[data-concept='{concept}'] .al-concept-taps", timeout=60_000)
        assert violations(page) == [], concept
    page.close()


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_the_static_sites_first_screen_has_no_serious_violation(browser, site, size):  # noqa: F811
    url, _ = site
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    assert violations(page) == []
    page.close()


def test_the_map_reads_out_with_the_arrow_keys_and_shows_its_numbers(browser, server):  # noqa: F811
    page = open_page(browser, server, closed=True)
    page.wait_for_selector("#result .al-spine .al-block", timeout=60_000)
    page.focus("#result .al-stage")
    page.keyboard.press("ArrowRight")
    first = page.inner_text("#result .al-readout")
    page.keyboard.press("ArrowDown")
    second = page.inner_text("#result .al-readout")
    assert first != second and "%" not in second or second  # each key says the cell it reached
    assert page.evaluate("() => window.attentionLens.state().kind")  # the page's state is intact
    page.click("#result .al-map-numbers summary")
    rows = page.eval_on_selector_all("#result .al-map-numbers tbody tr", "(rs) => rs.length")
    cells = page.eval_on_selector_all("#result .al-map-numbers tbody tr:first-child td", "(cs) => cs.length")
    assert rows >= 2 and cells >= 2
    page.focus("#result .al-map-numbers tbody td")
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("() => [document.activeElement.tagName, document.activeElement.cellIndex]")
    assert focused == ["TD", 2]  # the second number of the first row (after the row's label)
    page.close()


def test_the_walks_card_takes_the_focus(browser, server):  # noqa: F811
    page = open_page(browser, server, closed=True)
    page.wait_for_selector("#result .al-spine .al-block", timeout=60_000)
    page.click(".al-tour-start")
    assert page.evaluate("() => !!document.activeElement.closest('.al-tour')")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.classList.contains('al-tour-button')")
    page.keyboard.press("Escape")
    page.close()
