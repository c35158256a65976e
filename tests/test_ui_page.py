"""The page in a real browser (Debian's chromium) against app.py serving the shipped checkpoint:
one server and one browser for the module; each test opens its own page."""

import json
import os
from pathlib import Path

import pytest

from ui.app_process import CHROMIUM, chromium

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "de-en"
SECOND = ROOT / "checkpoints" / "de-en-everyday"  # the model the page compares with
pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
    pytest.mark.skipif(not (CHECKPOINT / "model.safetensors").is_file(), reason="the shipped checkpoint is missing"),
]
# Captions from the Multi30k val split the model is sure of, and sentences unlike any caption.
VAL = ["Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.", "Eine Frau spielt ein Lied auf ihrem Cello."]
# (both go to the everyday model, whose alarm fires for them: the model was unsure of its translation)
UNLIKE = ["Die Zentralbank senkt den Leitzins.", "Das Kernkraftwerk wurde stillgelegt."]


@pytest.fixture(scope="module")
def server(shipped_app):
    """The app on the shipped checkpoint: one for the whole session (tests/conftest.py)."""
    return shipped_app


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def open_page(browser, server, width=1366, height=768, dark=False, closed=False):
    """A page of the app; every view's section open unless `closed` (as a first visit finds it)."""
    page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=True)
    query = [q for q, on in (("__theme=dark", dark), ("open=all", not closed)) if on]
    page.goto(server + ("?" + "&".join(query) if query else ""))
    page.wait_for_selector(".al-result", timeout=60_000)  # the viewer's scripts ran
    return page


@pytest.fixture(scope="module")
def desk(browser, server):
    """One desktop page (1366x768) shared by the tests that need no fresh one: page loads are the slow part."""
    page = open_page(browser, server)
    yield page
    page.close()


def wait_for_answer(page, before: str):
    """Until a new answer from the server is drawn."""
    page.wait_for_function(
        "(before) => { const r = document.querySelector('#result .al-result');"
        " return r.dataset.shown && r.dataset.shown !== before && !r.classList.contains('al-busy'); }",
        arg=before,
        timeout=30_000,
    )


def search(page, method: str):
    """Choose the search (beam search or greedy): it waits in Options, folded again after."""
    page.locator("#options > button").first.click()
    page.locator("#decoding").get_by_text(method, exact=True).click()
    page.locator("#options > button").first.click()


def translate(page, text):
    before = page.locator("#result .al-result").get_attribute("data-shown") or ""
    page.locator("#source textarea").fill(text)
    page.locator("#translate").click()
    wait_for_answer(page, before)


def selection(page) -> list[str]:
    return page.locator(".al-viewer").get_attribute("data-selection").split()


def test_example_click_translates_and_map_and_translation_fit_the_screen(browser, server):
    from playwright.sync_api import expect

    page = open_page(browser, server)
    page.locator("#options > button").first.click()  # the examples wait behind one button, with the options
    page.get_by_text("Eine Frau spielt ein Lied auf", exact=False).first.click()
    expect(page.locator(".al-english")).to_contain_text("cello", timeout=30_000)
    page.locator("#options > button").first.click()  # folded again
    expect(page.locator("#source textarea")).to_have_value(VAL[1])
    for selector in (".al-english", ".al-canvas"):  # both in view at 1366x768, without scrolling
        box = page.locator(selector).bounding_box()
        assert box["y"] + min(box["height"], 150) <= 768, (selector, box)
    expect(page.locator(".al-download").first).to_be_enabled()
    page.close()


def test_stale_marking_and_greedy_reruns(desk):
    from playwright.sync_api import expect

    page = desk
    translate(page, VAL[0])
    expect(page.locator(".al-status")).to_contain_text("beam search")
    page.locator("#source textarea").press_sequentially(" Ja")
    expect(page.locator(".al-result")).to_have_class("al-result al-stale")
    expect(page.locator(".al-stale-note")).to_be_visible()
    search(page, "greedy")
    expect(page.locator(".al-status")).to_contain_text("greedy", timeout=30_000)
    expect(page.locator(".al-result")).to_have_class("al-result")  # fresh again
    before = page.locator(".al-result").get_attribute("data-shown")
    search(page, "beam search")  # back to the default for the other tests
    wait_for_answer(page, before)


def test_switching_keeps_the_layer_and_asks_the_server_nothing(desk):
    page = desk
    translate(page, VAL[0])
    requests = []
    page.locator(".al-view .al-choice[data-value='matrix']").click()
    page.locator(".al-level .al-choice[data-value='words']").click()

    def count(request):  # every request the page makes from here on
        requests.append(request.url)

    page.on("request", count)
    draws = int(page.locator(".al-viewer").get_attribute("data-draws"))
    page.locator(".al-layer .al-choice[data-value='0']").click()
    page.locator(".al-kind .al-choice[data-value='encoder']").click()
    assert selection(page)[:4] == ["0", "encoder", "0", "mean"]  # layer 1 kept across the kind change
    page.locator(".al-head .al-choice[data-value='2']").click()
    page.locator(".al-view .al-choice[data-value='lines']").click()
    page.locator(".al-level .al-choice[data-value='pieces']").click()
    page.locator(".al-overview").click(position={"x": 30, "y": 30})  # a thumbnail: layer 1, head 1
    assert selection(page) == ["0", "encoder", "0", "0", "lines", "pieces"]
    assert int(page.locator(".al-viewer").get_attribute("data-draws")) >= draws + 6
    assert requests == [], requests
    page.remove_listener("request", count)
    page.locator(".al-view .al-choice[data-value='matrix']").click()
    page.locator(".al-level .al-choice[data-value='words']").click()


def test_downloads_are_exactly_what_is_on_screen(desk):
    page = desk
    translate(page, VAL[0])
    page.locator(".al-kind .al-choice[data-value='decoder']").click()
    page.locator(".al-layer .al-choice[data-value='1']").click()
    page.locator(".al-head .al-choice[data-value='2']").click()
    with page.expect_download() as png:
        page.locator(".al-download[data-format='png']").click()
    assert png.value.suggested_filename == "attention-lens_sentence1_decoder_layer2_head3_words.png"
    header = Path(png.value.path()).read_bytes()[:24]
    width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
    canvas = page.evaluate(
        "() => [document.querySelector('.al-canvas').width, document.querySelector('.al-canvas').height]"
    )
    assert [width, height] == canvas
    with page.expect_download() as svg:
        page.locator(".al-download[data-format='svg']").click()
    assert svg.value.suggested_filename.endswith("decoder_layer2_head3_words.svg")
    assert "Masked" in Path(svg.value.path()).read_text()  # the decoder's future cells say so
    with page.expect_download() as js:
        page.locator(".al-download[data-format='json']").click()
    exported = json.loads(Path(js.value.path()).read_text())
    assert exported["shown"]["kind"] == "decoder" and exported["shown"]["layer"] == 2 and exported["shown"]["head"] == 3
    assert exported["decoding"]["num_beams"] == 4 and exported["source"] == VAL[0]
    T = len(exported["tokens"]["target"])
    assert len(exported["maps"]["decoder"][1][2]) == T and len(exported["maps"]["cross"][0][0][0]) == len(
        exported["tokens"]["source"]
    )
    assert len(exported["shown"]["weights"]) == len(exported["shown"]["rows"])


def test_the_svg_is_the_view_shown_with_its_outlines_and_whole_title_and_every_map_has_a_legend(desk):
    import re

    page = desk
    translate(page, VAL[0])
    page.locator(".al-kind .al-choice[data-value='cross']").click()
    with page.expect_download() as matrix:
        page.locator(".al-download[data-format='svg']").click()
    text = Path(matrix.value.path()).read_text()
    width = float(re.search(r'<svg [^>]*width="([\d.]+)"', text).group(1))
    title = re.search(r"<text x=\"6\" y=\"15\"[^>]*>([^<]*)</text>", text).group(1)
    assert VAL[0] in title and width >= 7 * len(title) * 0.8  # wide enough for its title
    assert text.count('fill="none"') >= 5  # each row's strongest link outlined, as on the screen
    legend = page.locator("#result .al-legend")
    assert legend.is_visible() and "brightest cell" in legend.inner_text()
    page.locator(".al-view .al-choice[data-value='lines']").click()
    with page.expect_download() as lines:
        page.locator(".al-download[data-format='svg']").click()
    assert lines.value.suggested_filename.endswith("_lines.svg")
    drawn = Path(lines.value.path()).read_text()
    assert drawn.count("<line ") >= 10 and "<rect x=" not in drawn.replace('<rect width="100%"', "") and VAL[0] in drawn
    page.locator(".al-view .al-choice[data-value='matrix']").click()
    page.locator(".al-kind .al-choice[data-value='decoder']").click()
    assert "masked" in legend.inner_text()


def test_on_a_phone_every_control_of_the_viewers_is_a_44px_target(browser, server):
    page = open_page(browser, server, width=390, height=844)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.state().views.translate")
    small = page.evaluate("""() => [...document.querySelectorAll(
        '#result .al-choice, #result .al-download, #step-result .al-choice, .st-guess-toggle, .al-tour-start')]
      .filter((b) => b.offsetParent !== null)
      .map((b) => [b.textContent, b.getBoundingClientRect().width, b.getBoundingClientRect().height])
      .filter(([, w, h]) => w < 44 || h < 44)""")
    assert small == []
    page.close()


def test_a_paragraph_gives_one_translation_per_sentence_and_a_picker(desk):
    from playwright.sync_api import expect

    page = desk
    translate(page, "Ein Hund rennt über die Wiese. Eine Frau liest ein Buch. Zwei Kinder spielen am Strand.")
    expect(page.locator(".al-sentence-text")).to_have_count(3)
    picker = page.locator(".al-sentence select")
    expect(picker).to_be_visible()
    expect(picker.locator("option")).to_have_count(3)
    picker.select_option("2")
    assert selection(page)[0] == "2"
    expect(page.locator(".al-sentence-text.al-picked")).to_have_attribute("data-sentence", "2")


def test_the_unfamiliar_notice_comes_for_other_german_and_not_for_captions(desk):
    from playwright.sync_api import expect

    page = desk
    for text in UNLIKE:
        translate(page, text)
        expect(page.locator("#result .al-unfamiliar")).to_be_visible()
    for text in VAL:
        translate(page, text)
        expect(page.locator("#result .al-unfamiliar")).to_have_count(0)


def test_a_phone_reaches_every_view_and_control(browser, server):
    page = open_page(browser, server, width=390, height=844)
    translate(page, VAL[0])
    page.locator("#options > button").first.click()  # Options opened: its choices fit too
    for selector in ("#translate", "#decoding", "#options"):
        box = page.locator(selector).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (selector, box)
    for button in page.locator(".al-toolbar button, .al-toolbar select").all():
        if button.is_visible():
            box = button.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    for name in ("matrix", "lines"):
        page.locator(f".al-view .al-choice[data-value='{name}']").click()
        assert page.locator(".al-canvas").is_visible()
    page.locator(".al-view .al-choice[data-value='matrix']").click()
    assert (
        page.evaluate("() => document.querySelector('.al-viewer') && document.querySelector('.al-overview').width") > 0
    )
    cell = page.evaluate("() => { const c = document.querySelector('.al-canvas'); return c.style.width; }")
    assert int(cell[:-2]) <= 390 or page.locator(".al-stage").evaluate("e => e.scrollWidth > e.clientWidth")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 392  # nothing wider than the phone
    page.close()


def test_dark_mode_draws_dark_maps(browser, server):
    page = open_page(browser, server, dark=True)
    translate(page, VAL[0])
    corner = page.evaluate(
        "() => Array.from(document.querySelector('.al-canvas').getContext('2d').getImageData(2, 2, 1, 1).data)"
    )
    assert sum(corner[:3]) < 3 * 80, corner  # the map's background is dark, not a white card
    page.close()


def test_german_words_show_their_training_evidence_and_rare_ones_are_marked(desk):
    from training_data.evidence import load_evidence

    translate(desk, "Der Quark ist heute billig.")  # everyday German: the everyday model's training data
    assert "everyday model" in desk.locator("#result .al-route").inner_text()
    words = desk.locator("#result .al-evidence .al-ev-word")
    assert words.all_inner_texts() == ["Der", "Quark", "ist", "heute", "billig"]
    evidence = load_evidence(SECOND)
    assert evidence.word("quark")["rare"] and not evidence.word("ist")["rare"]
    assert "al-ev-rare" in words.nth(1).get_attribute("class")  # 'quark': rare in the training data
    assert "al-ev-rare" not in words.nth(2).get_attribute("class")
    words.nth(3).click()
    detail = desk.locator("#result .al-evidence-detail")
    times = evidence.word("heute")["count"]
    assert f"\u2018heute\u2019 occurs {times:,} times in the training data" in detail.inner_text()
    shown = len(evidence.word("heute")["examples"])
    assert shown >= 1 and desk.locator("#result .al-evidence-examples li").count() == shown


def test_comparing_shows_the_second_model_beside_the_first_and_hides_it_again(desk):
    from playwright.sync_api import expect

    translate(desk, "Ein Mann fährt Fahrrad.")
    expect(desk.locator("#second-column")).to_be_hidden()
    desk.locator("#result .al-see-other").click()  # the route line's button ticks the comparison
    second = desk.locator("#second-result .al-result")
    desk.wait_for_function(
        "() => { const r = document.querySelector('#second-result .al-result'); return r && r.dataset.shown; }",
        timeout=30_000,
    )
    expect(desk.locator("#second-column")).to_be_visible()  # Gradio shows the column on its own schedule
    expect(second.locator(".al-english")).not_to_have_text("")
    assert "al-busy" not in second.get_attribute("class")
    first_box, second_box = desk.locator("#result").bounding_box(), desk.locator("#second-result").bounding_box()
    assert second_box["x"] > first_box["x"] + first_box["width"] - 5  # side by side at 1366 px
    shown = second.get_attribute("data-shown")
    translate(desk, "Zwei Hunde spielen im Gras.")  # a new sentence reaches both
    desk.wait_for_function(
        "(s) => document.querySelector('#second-result .al-result').dataset.shown !== s", arg=shown, timeout=30_000
    )
    assert "dog" in second.locator(".al-english").inner_text().lower()
    desk.locator("#result .al-see-other").click()
    expect(desk.locator("#compare input")).not_to_be_checked()
    expect(desk.locator("#second-column")).to_be_hidden()


def test_each_sentence_is_translated_by_the_model_that_knows_it_and_the_page_says_which(browser, server):
    """The page's translator is the pair (ui/pair.py): everyday German by the everyday model, captions by the default
    one, in one text; a line says which and why, with one click to the other model's answer; German written in
    lowercase is read with its capitals; text that is not German is named; the visitor can force a model."""
    from playwright.sync_api import expect

    page = open_page(browser, server, width=390, height=844)
    translate(page, "Wo ist der Bahnhof?")
    assert page.locator("#result .al-english").inner_text().strip() == "Where's the station?"
    note = page.locator("#result .al-route")
    assert "Translated by the everyday model" in note.inner_text() and "\u201cWo\u201d" in note.inner_text()
    expect(page.locator("#compare input")).not_to_be_checked()
    note.locator(".al-see-other").click()
    expect(page.locator("#compare input")).to_be_checked()
    line = page.locator("#result .al-route-other")
    line.wait_for(timeout=30_000)
    second = page.locator("#second-result .al-english").inner_text().strip()
    assert second and second in line.inner_text() and "below" in line.inner_text()  # a phone: its maps are below
    assert "the other of the two models" in page.locator("#second-result .al-route").inner_text()
    page.close()
    page = open_page(browser, server)
    translate(page, "ich möchte ein bier")
    assert "beer" in page.locator("#result .al-english").inner_text().lower()
    assert "bier \u2192 Bier" in page.locator("#result .al-recased").inner_text()
    assert page.evaluate("() => window.attentionLens.state().views.translate") == "ich möchte ein bier"
    translate(page, "Wo ist der Bahnhof? " + VAL[1])  # one text, two kinds of German
    lines = page.locator("#result .al-route").all_inner_texts()
    assert any("Sentence 1: translated by the everyday model" in t for t in lines), lines
    assert any("Sentence 2: translated by the default model" in t for t in lines), lines
    translate(page, "私はビールが飲みたい。")
    assert "does not look like German" in page.locator("#result .al-not-german").inner_text()
    page.locator("#options > button").first.click()
    page.locator("#model-choice label", has_text="The default model").click()
    translate(page, "Wo ist der Bahnhof?")
    assert "as you chose in Options" in page.locator("#result .al-route").inner_text()
    assert page.locator("#result .al-english").inner_text().strip() != "Where's the station?"
    assert page.evaluate("() => window.attentionLens.state().model") == "default"
    page.wait_for_function("() => location.hash.includes('model=default')", timeout=10_000)
    link = page.url
    page.close()
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(link)  # the link keeps the choice: the sentence is translated by the model it names
    page.wait_for_function(
        "() => [...document.querySelectorAll('#result .al-route')].some((n) => n.textContent.includes('as you chose'))",
        timeout=60_000,
    )
    page.close()


def test_the_first_visit_shows_an_example_translated_and_drawn_without_a_click(browser, server):
    from playwright.sync_api import expect

    from ui.translate import EXAMPLES

    page = open_page(browser, server)
    expect(page.locator("#source textarea")).to_have_value(EXAMPLES[0])
    expect(page.locator("#result .al-english")).to_contain_text("headphones")
    page.wait_for_function(
        "() => document.querySelector('#result .al-canvas') && "
        "document.querySelector('#result .al-canvas').getBoundingClientRect().height > 100"
    )
    expect(page.locator("#result .al-download").first).to_be_enabled()
    assert page.locator("#result .al-result").get_attribute("class") == "al-result"  # neither empty nor stale
    page.close()


def test_an_empty_box_clears_the_old_result_picker_and_overview(desk):
    translate(desk, "Ein Mann fährt Fahrrad. Zwei Hunde spielen.")
    assert desk.locator("#result .al-sentence").is_visible()
    translate(desk, "")
    assert "Type a German sentence" in desk.locator("#result .al-status").inner_text()
    assert not desk.locator("#result .al-sentence").is_visible()
    assert desk.locator("#result .al-notices").inner_text().strip() == ""
    blank = desk.evaluate(
        "() => { const c = document.querySelector('#result .al-overview');"
        " return !c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v) => v); }"
    )
    assert blank  # no thumbnails of the old answer
    assert desk.locator("#result .al-download").first.is_disabled()


def test_a_row_opens_up_into_query_key_softmax_and_values(desk):
    translate(desk, VAL[0])
    box = desk.locator("#result .al-canvas").bounding_box()
    desk.locator("#result [data-value='cross']").first.click()
    desk.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5)  # a cell: its row in focus
    desk.locator("#result .al-open-cell").click()
    desk.wait_for_selector("#result .al-qkv", timeout=30_000)
    text = desk.locator("#result .al-qkv").inner_text()
    for words in ("The query", "dot product", "divided by \u221a64", "Softmax across the row", "Mixing the values"):
        assert words in text, words
    weights = [float(v) for v in desk.locator("#result .al-qkv-after .al-qkv-value").all_inner_texts()]
    assert abs(sum(weights) - 1) < 0.02 and len(weights) == len(
        desk.locator("#result .al-qkv-before .al-qkv-bar").all()
    )


def test_the_ladder_shows_every_stage_for_every_english_piece(desk):
    translate(desk, VAL[1])
    desk.locator("#result [data-view='openLadder']").dispatch_event("click")  # the picture's blocks press it
    desk.wait_for_selector("#result .al-ladder-table", timeout=30_000)
    stages = desk.locator("#result .al-ladder-stage").all_inner_texts()
    assert stages[0] == "embedding" and stages[-1] == "layer 3 feed-forward" and len(stages) == 10
    columns = desk.locator("#result .al-ladder-table tr").first.locator("th").count() - 1
    last = desk.locator("#result .al-ladder-table tr").last.locator("td")
    assert columns == last.count() and columns >= 5
    assert (
        last.all_inner_texts().count("\u2605") >= columns - 1
    )  # the last stage's favourite is, mostly, what was written
    assert desk.locator("#result .al-ladder-decided").count() == columns  # one decision per piece
    translate(desk, "")
    assert desk.locator("#result .al-ladder-table").count() == 0 and not desk.locator("#result .al-inside").is_visible()


def test_who_wrote_each_word_shows_a_meter_per_piece_and_the_two_maps_with_their_agreement(desk):
    translate(desk, "Ein Mann mit einem roten Hut fährt Fahrrad.")
    desk.locator("#result [data-view='openContributions']").dispatch_event("click")  # the picture's blocks press it
    desk.wait_for_selector("#result .al-who-table", timeout=30_000)
    words = desk.locator("#result .al-who-word").all_inner_texts()
    assert "hat" in words and len(words) == desk.locator("#result .al-who-meter").count()
    shares = [int(t.rstrip("%")) for t in desk.locator("#result .al-who-share").all_inner_texts()]
    assert all(0 <= p <= 100 for p in shares) and max(shares) > 50  # content words come mostly from the German
    tables = desk.locator("#result .al-who-table")
    assert tables.count() == 2 and "Cross-attention" in tables.nth(1).locator("caption").inner_text()
    hat = desk.locator("#result .al-who-table").first.locator("tr", has=desk.locator("th.al-who-row", has_text="hat"))
    assert "Hut" in hat.locator(".al-who-top").get_attribute("title")  # its German part came most from Hut
    assert "agree on the German piece that matters most" in desk.locator("#result .al-who-agree").inner_text()


def test_which_heads_carry_a_word_proposes_a_swap_and_draws_three_grids(desk):
    translate(desk, "Ein Hund rennt über die Wiese.")
    desk.locator("#result [data-view='openPatch']").dispatch_event("click")  # the picture's blocks press it
    assert desk.locator("#result .al-patch-input").input_value() == "Ein Pferd rennt über die Wiese."
    desk.wait_for_selector("#result .al-patch-grid", timeout=30_000)
    assert desk.locator("#result .al-patch-grid").count() == 3
    says = desk.locator("#result .al-patch-says").inner_text()
    assert "‘dog’" in says and "Every head copied: 100%; none: 0%" in says
    desk.locator("#result .al-patch-input").fill("Ein großer Hund rennt über die Wiese.")
    desk.locator("#result .al-ladder-panel > .al-open-ladder").click()
    desk.wait_for_selector("#result .al-qkv-error", timeout=30_000)
    assert "as many pieces" in desk.locator("#result .al-qkv-error").inner_text()


def test_the_hovered_cell_is_read_out_next_to_the_pointer(desk):
    page = desk
    translate(page, VAL[0])
    canvas = page.locator("#result .al-canvas")
    box = canvas.bounding_box()
    layout = page.evaluate(
        "() => { const l = window.attentionLens.view('translate').viewer.layout; return [l.left, l.top, l.cell]; }"
    )
    x, y = box["x"] + layout[0] + layout[2] * 1.5, box["y"] + layout[1] + layout[2] * 1.5  # the cell (1, 1)
    page.mouse.move(x, y)
    tip = page.locator("#result .al-tip")
    assert tip.is_visible() and tip.inner_text().startswith("While writing ") and "of its attention" in tip.inner_text()
    tip_box = tip.bounding_box()
    assert abs(tip_box["x"] - x) < 350 and abs(tip_box["y"] - y) < 200  # beside the pointer, not in a far panel
    page.mouse.move(box["x"] - 20, box["y"] - 20)
    assert not tip.is_visible()


@pytest.mark.parametrize("width, height", [(1366, 768), (390, 844)])
def test_a_two_thousand_character_word_wraps_and_nothing_runs_off_the_screen(browser, server, width, height):
    page = open_page(browser, server, width, height)
    try:
        translate(page, "Ein " + "Donaudampfschifffahrt" * 95 + " fährt.")  # one word of 1,995 characters
        overflow = page.evaluate(
            "() => { const wide = [...document.querySelectorAll('body *')].filter(e => {"
            " const r = e.getBoundingClientRect(); return r.width > 0 && r.right > innerWidth + 1; });"
            " return {scroll: document.scrollingElement.scrollWidth - innerWidth,"
            " wide: wide.slice(0, 5).map(e => e.className || e.tagName)}; }"
        )
        assert overflow["scroll"] <= 0 and overflow["wide"] == [], overflow
    finally:
        page.close()
