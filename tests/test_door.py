"""The page's door (window.attentionLens, views.js) the same on both front doors: one script opens every view by
name through openView() in the app (app.py on the shipped checkpoints) and on the static site, each promise
resolving once its view shows the page's sentence; an unknown name is refused; state() names the sentence."""

import pytest

from tests.test_site import pytestmark  # noqa: F401  (browser)
from tests.test_ui_page import browser, open_page, server, translate  # noqa: F401  (fixtures)

SENTENCE = "Ich möchte ein Bier."
NAMES = [
    "translate",
    "step",
    "headlab",
    "who",
    "patch",
    "why",
    "qkv",
    "ladder",
    "history",
    "compare",
    "copylab",
    "lab",
    "code",
]
SHOWS = {  # what each view shows once open (a selector that exists only then)
    "who": "#result .al-who-table, #site-result .al-who-table",
    "patch": "#result .al-patch-input, #site-result .al-patch-input",
    "ladder": "#result .al-ladder-table, #site-result .al-ladder-table",
    "code": "#result .al-code-view, #site-result .al-code-view",
    "qkv": ".al-qkv-strip",
    "why": ".st-why-answer > *",
}
SCRIPT = """async ([names, shows]) => {
  const door = window.attentionLens, opened = [], seen = {};
  for (const name of names) {
    await door.openView(name);
    opened.push(name);
    if (shows[name]) seen[name] = document.querySelectorAll(shows[name]).length;
  }
  let refused = null;
  try { await door.openView("nope"); } catch (err) { refused = String(err.message); }
  await door.openView("glossary");
  return { opened, seen, refused, state: door.state(), glossary: !!document.querySelector("dialog.al-glossary[open]") };
}"""


def drive(page) -> dict:
    assert page.evaluate("() => window.attentionLens.viewNames()") == [
        *NAMES[:9],
        "compare",
        "copylab",
        "lab",
        "code",
        "glossary",
    ]
    answer = page.evaluate(SCRIPT, [NAMES, SHOWS])
    assert answer["opened"] == NAMES and answer["glossary"]
    assert answer["refused"] and "unknown view 'nope'" in answer["refused"]
    assert all(answer["seen"][name] > 0 for name in SHOWS), answer["seen"]  # each shown as its promise resolved
    views = answer["state"]["views"]
    assert answer["state"]["sentence"] == SENTENCE
    assert views["step"] == SENTENCE and views["headlab"] == SENTENCE and views["history"] == SENTENCE
    return answer


@pytest.mark.slow
def test_one_script_opens_every_view_in_the_app(browser, server):  # noqa: F811
    page = open_page(browser, server, closed=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    translate(page, SENTENCE)
    drive(page)
    assert errors == []
    page.close()


def open_site(browser, url: str):  # noqa: F811
    """A fresh page of the static site at 1366x768, once its model is ready, and the list of its page errors."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    return page, errors


@pytest.mark.slow
def test_one_script_opens_every_view_on_the_static_site(site, browser):  # noqa: F811
    url, _ = site
    page, errors = open_site(browser, url)
    page.evaluate("(text) => window.attentionLens.translate(text, {num_beams: 4})", SENTENCE)
    drive(page)
    assert errors == []
    page.close()


def test_one_view_per_url_on_the_static_site(site, browser):  # noqa: F811
    """?view=NAME&embed=1 (embed.js): that view alone, for the link's sentence, without the header and the walk; a
    name the door does not know is said on the page, as text."""
    from urllib.parse import quote

    url, _ = site
    page = browser.new_page(viewport={"width": 800, "height": 600})
    page.goto(f"{url}?embed=1&view=translate&concept=mask&s={quote(SENTENCE)}")
    page.wait_for_selector("html.al-embed-ready", timeout=90_000)
    assert page.locator("[data-concept='mask']").is_visible()
    assert not page.locator("#site-header").is_visible() and not page.locator(".al-tour-start").first.is_visible()
    assert not page.locator("#site-step").is_visible()
    assert page.evaluate("() => window.attentionLens.state().sentence") == SENTENCE
    page.goto(f"{url}?embed=1&view=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
    page.wait_for_selector(".al-embed-error", timeout=90_000)
    assert "no such view" in page.inner_text(".al-embed-error") and page.locator("img[src=x]").count() == 0
    hostile = "<img src=x onerror=window.hit=1> Ein Hund."  # the link's sentence is text, wherever it is shown
    page.goto(f"{url}?embed=1&view=translate&s={quote(hostile)}")
    page.wait_for_selector("html.al-embed-ready", timeout=90_000)
    assert page.locator("img[src=x]").count() == 0 and page.evaluate("() => window.hit === undefined")
    page.close()
