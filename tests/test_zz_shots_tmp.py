from tests.test_site import pytestmark  # noqa
from tests.test_ui_page import browser, open_page, server  # noqa

def shoot(browser, server, name, experiment, guess, width, height, lang=None, steps=300, pair=None):
    ctx = browser.new_context(viewport={"width": width, "height": height}, locale=lang or "en-US")
    page = ctx.new_page()
    page.goto(server + (f"?lang={lang}" if lang else ""))
    page.wait_for_selector(".al-result", timeout=60000)
    page.evaluate("() => window.attentionLens.openView('lab')")
    page.wait_for_selector("#view-lab .al-lab-question")
    page.select_option("#view-lab select.al-lab-experiment", experiment)
    if pair:
        page.select_option("#view-lab select.al-lab-pair", pair)
    page.click(f"#view-lab .al-lab-guess[data-guess='{guess}']")
    page.fill("#view-lab .al-lab-steps", str(steps))
    page.click("#view-lab .al-lab-go")
    page.wait_for_selector("#view-lab .al-lab-verdict", timeout=240000)
    page.locator("#view-lab").scroll_into_view_if_needed()
    page.evaluate("() => document.querySelector('#view-lab .al-lab-card').scrollIntoView()")
    page.screenshot(path=f"docs/screenshots/{name}.png")
    page.evaluate("() => document.querySelector('#view-lab .al-lab-end').scrollIntoView()")
    page.screenshot(path=f"docs/screenshots/{name}-end.png")
    print(name, page.inner_text("#view-lab .al-lab-status"), page.inner_text("#view-lab .al-lab-verdict"))
    ctx.close()

def test_shots(browser, server):
    shoot(browser, server, "lab-desktop", "causal-mask", "a", 1366, 768)
    shoot(browser, server, "lab-phone", "scale", "a", 390, 844)
    shoot(browser, server, "lab-zh", "heads", "b", 1366, 768, lang="zh-CN")
