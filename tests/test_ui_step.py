"""The step-through view and the /trace API, for real: app.py serving the shipped checkpoint, driven
by gradio_client and by Debian's chromium. One server and one browser for the module."""

import pytest

from lens.maps import explain
from tests.test_ui_page import CHROMIUM, browser, pytestmark, server  # noqa: F401  (fixtures and skips reused)

SENTENCE = "Ein Mann fährt Fahrrad."


@pytest.fixture(scope="module")
def client(server):  # noqa: F811
    from gradio_client import Client

    return Client(server, verbose=False)


@pytest.fixture(scope="module")
def reference():
    from tests.test_ui_page import CHECKPOINT
    from translation import Translator

    return Translator.from_pretrained(CHECKPOINT, device="cpu")


@pytest.fixture(scope="module")
def expected(reference):
    """The trace the page shows by default (beam 4), computed here."""
    from lens.trace import trace

    return trace(reference, SENTENCE, num_beams=4, top_k=10)


# ----- the API ---------------------------------------------------------------------------------


def test_trace_endpoint_is_the_lens_trace(client, reference):
    from lens.trace import trace

    got = client.predict(SENTENCE, "beam search", 3, 1.0, 40, 5, "", api_name="/trace")
    expected = trace(reference, SENTENCE, num_beams=3, top_k=5, max_new_tokens=40).to_dict(3)  # as the API rounds
    assert got["source"] == SENTENCE and got["translation"] == expected["translation"]
    assert got["translation"] == reference.translate(SENTENCE, num_beams=3, max_new_tokens=40)
    assert got["target_tokens"] == expected["target_tokens"] and got["nbest"] == expected["nbest"]
    assert [n["status"] for n in got["beam"]] == [n["status"] for n in expected["beam"]]
    for a, b in zip(got["steps"], expected["steps"]):
        assert a["token"] == b["token"] and [c["token"] for c in a["top_k"]] == [c["token"] for c in b["top_k"]]
        assert abs(a["prob"] - b["prob"]) < 1e-3 and len(a["top_k"]) == 5
    greedy = client.predict(SENTENCE, "greedy", api_name="/trace")
    assert greedy["num_beams"] == 1 and greedy["beam"] == [] and len(greedy["steps"][0]["top_k"]) == 10


def test_prefix_on_translate_and_explain_and_old_calls_still_work(client, reference):
    own = client.predict(SENTENCE, "greedy", 1, 1.0, 40, "A man", api_name="/translate")
    assert own == reference.translate(SENTENCE, num_beams=1, max_new_tokens=40)  # its own start: the same
    forced = client.predict(SENTENCE, "beam search", 4, 1.0, 40, "A person", api_name="/translate")
    assert forced.startswith("A person") and forced == reference.translate(
        SENTENCE, max_new_tokens=40, prefix="A person"
    )
    explained = client.predict(SENTENCE, "beam search", 4, 1.0, 40, "A person", api_name="/explain")["sentences"][0]
    expected = explain(reference, SENTENCE, max_new_tokens=40, prefix="A person")
    assert explained["translation"] == forced and explained["target_tokens"] == expected.target_tokens
    T, S = len(expected.target_tokens), len(expected.source_tokens)
    assert [len(explained["cross"][0][0]), len(explained["cross"][0][0][0])] == [T, S]
    traced = client.predict(SENTENCE, "greedy", 1, 1.0, 40, 3, "A person", api_name="/trace")
    assert traced["prefix_length"] == 2 and [s["token"] for s in traced["steps"][:2]] == ["A", "▁person"]
    assert client.predict(SENTENCE, "greedy", 1, 1.0, 40, api_name="/translate") == own  # no prefix argument


@pytest.mark.parametrize(
    "endpoint, args, message",
    [
        ("/trace", ("greedy", 1, 1.0, 40, 0, ""), "top_k must be a whole number"),
        ("/trace", ("greedy", 1, 1.0, 40, 2.5, ""), "top_k must be a whole number"),
        ("/translate", ("greedy", 1, 1.0, 40, "a" * 301), "prefix has 301 characters"),
        ("/explain", ("greedy", 1, 1.0, 3, "a big brown dog runs"), "longer than the 3 new tokens"),
    ],
)
def test_bad_trace_and_prefix_arguments_are_refused_by_name(client, endpoint, args, message):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match=message):
        client.predict(SENTENCE, *args, api_name=endpoint)
    with pytest.raises(AppError, match="one sentence"):
        client.predict(SENTENCE + " Eine Frau liest.", "greedy", 1, 1.0, 40, "A", api_name="/translate")


# ----- the page --------------------------------------------------------------------------------


def open_view(browser, server, sentence=SENTENCE, beams=4, width=1366, height=768):  # noqa: F811
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + "?open=all")  # every view's section open, as the picture opens one
    page.wait_for_selector(".st-view", timeout=60_000)
    page.locator("#step-source textarea").fill(sentence)
    if beams != 4:
        page.locator("#step-beams input[type='number']").fill(str(beams))
    page.locator("#step-go").click()
    page.wait_for_function(
        "() => { const v = document.querySelector('.st-view');"
        " return v.dataset.shown && !v.classList.contains('st-busy'); }",
        timeout=60_000,
    )
    return page


def test_the_slider_and_arrow_keys_step_through_without_the_server(browser, server, reference, expected):  # noqa: F811
    from playwright.sync_api import expect

    page = open_view(browser, server)
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    view = page.locator(".st-view")
    assert view.get_attribute("data-step") == "0" and view.get_attribute("data-which") == "beam"
    expect(page.locator(".st-count")).to_have_text(f"piece 1 of {len(expected.steps)}")
    first = page.locator(".st-bars").inner_text()
    page.locator(".st-slider").focus()
    page.keyboard.press("ArrowRight")
    expect(view).to_have_attribute("data-step", "1")
    expect(page.locator(".st-w.st-now")).to_have_text(expected.target_tokens[1].replace("▁", ""))
    assert page.locator(".st-bars").inner_text() != first
    page.locator(".st-slider").fill("3")
    expect(view).to_have_attribute("data-step", "3")
    top = [expected.token_text[i].replace("▁", "") for i in expected.steps[3].top_ids]
    assert page.locator(".st-cand .st-cand-label").all_inner_texts() == top
    expect(page.locator(".st-cand.st-chosen .st-cand-label")).to_have_text(expected.target_tokens[3].replace("▁", ""))
    expect(page.locator(".st-entropy")).to_contain_text("equally likely pieces")
    chips = page.locator(".st-self .st-chip")
    expect(chips).to_have_count(4)  # (start) and the three words written before step 3
    page.locator(".st-head .al-choice[data-value='1']").click()  # a head: the shading changes, at once
    page.locator(".st-card[data-which='greedy']").click()
    expect(view).to_have_attribute("data-which", "greedy")
    assert requests == [], requests
    page.close()


def test_forcing_a_word_changes_the_continuation_and_marks_it(browser, server, reference, expected):  # noqa: F811
    from playwright.sync_api import expect

    page = open_view(browser, server)
    page.locator(".st-slider").fill("1")
    candidate = page.locator(".st-cand:not(.st-chosen)").first
    forced_id = int(candidate.get_attribute("data-id"))
    candidate.click()
    page.wait_for_function("() => document.querySelector('.st-whatif').dataset.shown", timeout=60_000)
    new = reference.translate(SENTENCE, num_beams=4, prefix=expected.target_ids[:1] + [forced_id])
    expect(page.locator(".st-new .st-line")).to_have_text(new)
    assert new != expected.translation
    assert page.locator(".st-whatif .st-changed, .st-whatif .st-dropped").count() >= 1
    expect(page.locator(".st-maps")).to_have_attribute("data-translation", new)  # its own maps
    expect(page.locator(".st-maps .al-canvas")).to_be_visible()
    page.locator(".st-type input").fill("woman")  # typed, at the same step
    page.locator(".st-type .st-force").click()
    expect(page.locator(".st-new .st-line")).to_have_text(reference.translate(SENTENCE, num_beams=4, prefix="A woman"))
    page.close()


def test_clicking_a_hypothesis_shows_its_maps(browser, server, reference, expected):  # noqa: F811
    from playwright.sync_api import expect

    page = open_view(browser, server)
    expect(page.locator(".st-hyp")).to_have_count(len(expected.nbest))
    assert page.locator(".st-node").count() == len(expected.beam)
    second = next(n for n in expected.beam if n.id == expected.nbest[1])
    page.locator(".st-hyp").nth(1).click()
    text = reference.decode(second.token_ids)
    expect(page.locator(".st-maps")).to_have_attribute("data-translation", text, timeout=30_000)
    expect(page.locator(".st-maps .st-title")).to_contain_text(text)
    expect(page.locator(".st-maps .al-canvas")).to_be_visible()
    pruned = next(n for n in expected.beam if n.status == "pruned" and len(n.token_ids) >= 2)
    page.locator(f".st-node[data-node='{pruned.id}']").click()
    expect(page.locator(".st-maps")).to_have_attribute("data-translation", reference.decode(pruned.token_ids))
    page.close()


def test_inside_a_step_reads_out_who_wrote_the_piece_and_when_it_was_decided_also_when_forced(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    page = open_view(browser, server, "Ein Mann mit einem roten Hut fährt Fahrrad.")
    page.locator(".st-inside-open").click()
    expect(page.locator(".st-inside .st-inside-line")).to_have_count(2, timeout=30_000)
    assert "from the German" in page.locator(".st-inside").inner_text()
    assert page.locator(".st-inside .st-rung").count() == 10  # the embedding and three sublayers of three layers
    page.locator(".st-slider").fill("5")  # "hat"
    expect(page.locator(".st-inside")).to_contain_text("most from \u2018Hut\u2019")
    page.locator(".st-slider").fill("1")
    page.locator(".st-type input").fill("woman")
    page.locator(".st-type .st-force").click()
    page.wait_for_function("() => document.querySelector('.st-whatif').dataset.shown", timeout=60_000)
    page.locator(".st-step-forced").click()
    expect(page.locator(".st-view")).to_have_attribute("data-which", "forced")
    expect(page.locator(".st-inside .st-inside-line")).to_have_count(2, timeout=30_000)  # the forced translation's own
    assert "woman" in page.locator(".st-w.st-now").inner_text()
    page.close()
