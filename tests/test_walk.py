"""One sentence for the whole page, and the page's state in its link (ui/static/walk.js), in Chromium
against app.py with the shipped checkpoint."""

from urllib.parse import parse_qs, urlsplit

from tests.test_ui_page import (  # noqa: F401  (fixtures)
    CHECKPOINT,
    CHROMIUM,
    browser,
    pytestmark,  # noqa: F401  (the same skips)
    server,
)

SENTENCE = "Zwei Hunde spielen im Schnee."
OTHER = "Eine Frau spielt ein Lied auf ihrem Cello."
STATE = "() => window.attentionLens.state()"


def fresh(browser, url: str):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    base, _, fragment = url.partition("#")
    page.goto(base + "?open=all" + ("#" + fragment if fragment else ""))  # every view's section open
    page.wait_for_function("() => window.attentionLens && window.attentionLens.state().views.translate", timeout=60_000)
    return page, errors


def translate(page, text: str) -> None:
    page.fill("#source textarea", text)
    page.click("#translate")
    page.wait_for_function(f"() => window.attentionLens.state().views.translate === {text!r}", timeout=60_000)


def step_through(page, text: str) -> None:
    """Translate `text`, then run the step view on it (the sentence every view shares)."""
    translate(page, text)
    page.click("#step-go")
    page.wait_for_function(f"() => window.attentionLens.state().views.step === {text!r}", timeout=60_000)


def test_the_sentence_translated_is_every_views_sentence_and_a_view_left_behind_says_so(browser, server):
    page, errors = fresh(browser, server)
    translate(page, SENTENCE)
    for box in ("#step-source textarea", "#headlab-source textarea", "#history-source textarea"):
        assert page.input_value(box) == SENTENCE, box
    page.click("#step-go")
    page.wait_for_function(f"() => window.attentionLens.state().views.step === {SENTENCE!r}", timeout=60_000)
    translate(page, OTHER)
    note = page.locator("#step-result.al-other-sentence").get_attribute("data-other-sentence")
    assert SENTENCE[:20] in note and "press Step through" in note
    state = page.evaluate(STATE)
    assert state["sentence"] == OTHER and state["views"]["step"] == SENTENCE and errors == []
    page.close()


def test_a_link_restores_the_sentence_and_what_the_map_shows(browser, server):
    page, errors = fresh(browser, server)
    translate(page, SENTENCE)
    page.locator("#result .al-kind .al-choice[data-value=encoder]").click()
    page.locator("#result .al-layer .al-choice[data-value='1']").click()
    page.locator("#result .al-head .al-choice[data-value='2']").click()
    page.locator("#result .al-level .al-choice[data-value=pieces]").click()
    page.wait_for_function("() => location.hash.includes('level=pieces')")
    link = page.evaluate("location.href")
    assert parse_qs(urlsplit(link).fragment) == {
        "s": [SENTENCE],
        "kind": ["encoder"],
        "layer": ["2"],
        "head": ["3"],
        "level": ["pieces"],
    }
    page.close()
    opened, errors = fresh(browser, link)
    opened.wait_for_function(f"() => window.attentionLens.state().views.translate === {SENTENCE!r}", timeout=60_000)
    opened.wait_for_function("() => window.attentionLens.state().head === 3")
    state = opened.evaluate(STATE)
    assert (state["kind"], state["layer"], state["head"], state["level"]) == ("encoder", 2, 3, "pieces")
    assert errors == []
    opened.close()


def test_a_link_to_a_step_of_the_step_view_opens_there(browser, server):
    from urllib.parse import urlencode

    page, errors = fresh(browser, server + "#" + urlencode({"s": SENTENCE, "view": "step", "step": 3}))
    page.wait_for_function(f"() => window.attentionLens.state().views.step === {SENTENCE!r}", timeout=60_000)
    page.wait_for_function("() => window.attentionLens.state().step === 3", timeout=30_000)
    assert page.evaluate(STATE)["view"] == "step" and errors == []
    page.close()


def test_guess_first_hides_where_the_model_looked_until_the_learner_guesses_and_keeps_a_score(browser, server):
    page, errors = fresh(browser, server)
    step_through(page, SENTENCE)
    page.click("#step-result .st-guess-toggle")
    chips = page.locator("#step-result .st-src .st-chip-guess")
    assert chips.count() >= 5 and page.locator("#step-result .st-src .st-chip-v").count() == 0  # no weights shown
    chips.nth(0).click()  # "Zwei" for "Two": where this model looks first
    revealed = page.locator("#step-result .st-src .st-chip-v")
    assert revealed.count() >= 5
    note = page.locator("#step-result .st-guess-note").inner_text()
    top = page.locator("#step-result .st-src .st-top .st-chip-word").inner_text()
    assert ("Right:" in note) == (top == "Zwei") and "Your score: " in note and "of 1 right" in note
    page.click("#step-result .st-nav >> nth=1")  # the next piece: asked again
    assert page.locator("#step-result .st-src .st-chip-guess").count() >= 5
    page.locator("#step-result .st-src .st-chip-guess").nth(1).click()
    assert "of 2 right" in page.locator("#step-result .st-guess-note").inner_text() and errors == []
    page.close()


def test_the_guided_walk_visits_each_stop_pointing_at_its_part_and_can_be_left(browser, server):
    page, errors = fresh(browser, server)
    page.click(".al-tour-start")
    stops = len(page.evaluate("() => window.attentionLens.walk()"))
    assert 24 <= stops <= 30 and len(page.evaluate("() => window.attentionLens.walk()")) == stops
    kinds = []
    for stop in range(1, stops + 1):
        assert page.locator(".al-tour").get_attribute("data-stop") == str(stop)
        assert page.locator(".al-tour-spot").count() == 1  # the part of the page it speaks of, outlined
        assert page.locator(".al-tour-title").inner_text().startswith(f"{stop} ·")
        kinds.append(page.evaluate(STATE)["kind"])
        if stop < stops:
            page.click(".al-tour-next")
    assert [kinds[10], kinds[12], kinds[13]] == ["encoder", "decoder", "cross"]  # the map follows the walk
    page.click(".al-tour-button >> nth=0")  # back one stop
    assert page.locator(".al-tour").get_attribute("data-stop") == str(stops - 1)
    page.keyboard.press("Escape")
    assert page.locator(".al-tour").count() == 0 and page.locator(".al-tour-spot").count() == 0 and errors == []
    page.close()


def test_the_unfamiliar_notice_is_in_every_view_that_shows_a_translation(browser, server):
    page, errors = fresh(browser, server)
    unlike = "Die Zentralbank senkt den Leitzins."  # the everyday model's alarm fires: it was unsure
    translate(page, unlike)
    assert page.locator("#result .al-unfamiliar").count() >= 1
    page.click("#step-go")
    page.wait_for_function(f"() => window.attentionLens.state().views.step === {unlike!r}", timeout=60_000)
    step_notice = page.locator("#step-result .st-notice")
    assert step_notice.is_visible() and "unlike what this model learned from" in step_notice.inner_text()
    page.click("#headlab-apply")
    page.wait_for_function(f"() => window.attentionLens.state().views.headlab === {unlike!r}", timeout=60_000)
    assert page.locator("#headlab-result .hl-notice").is_visible()
    step_through(page, SENTENCE)  # a caption: no notice once the views show it
    assert not page.locator("#step-result .st-notice").is_visible() and errors == []
    page.close()


def test_why_this_word_and_not_another_answers_from_contrast(browser, server):
    page, errors = fresh(browser, server)
    step_through(page, SENTENCE)
    assert "Why ‘Two’ and not" in page.locator("#step-result .st-why-label").inner_text()
    other = page.locator("#step-result .st-why-pick").input_value()
    page.click("#step-result .st-why-ask")
    page.wait_for_selector("#step-result .st-why-lead", timeout=60_000)
    lead = page.locator("#step-result .st-why-lead").inner_text()
    assert lead.startswith("The model found ‘Two’ about ") and f"times as likely as ‘{other}’" in lead
    foot = page.locator("#step-result .st-why-foot").inner_text()
    assert "Blue pieces pushed for ‘Two’, red ones for" in foot and "Ġ" not in lead + foot  # words agree with the signs
    assert page.locator("#step-result .st-why .al-legend-signed").count() == 1
    assert page.locator("#step-result .st-why-chips .st-chip").count() == 7  # Zwei Hunde spielen im Schnee . </s>
    quick = page.locator("#step-result .st-why-chip").nth(1)  # one click from another candidate
    named = quick.inner_text().removeprefix("why not ").removesuffix("?")
    quick.click()
    page.wait_for_function(
        f"() => document.querySelector('#step-result .st-why-lead')?.textContent.includes({('as likely as ' + named)!r})",
        timeout=60_000,
    )
    assert errors == []
    page.close()


def test_on_a_phone_the_beam_tree_opens_whole_and_can_be_read_at_actual_size(browser, server):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(server + "?open=all")
    page.wait_for_function("() => window.attentionLens && window.attentionLens.state().views.translate", timeout=60_000)
    step_through(page, SENTENCE)
    tree, svg = page.locator("#step-result .st-tree"), page.locator("#step-result .st-tree-svg")
    assert svg.bounding_box()["width"] <= tree.bounding_box()["width"] + 1  # the whole tree in view
    natural = float(svg.get_attribute("width"))
    page.click("#step-result .st-tree-toggle")
    assert abs(svg.bounding_box()["width"] - natural) < 1 and natural > tree.bounding_box()["width"]  # actual size
    page.close()
