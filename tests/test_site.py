"""The static site (python -m ui.export_site) in Debian's chromium, from a local static server, with every other
request refused: the page's tokenizer, model and search against the Python ones on the shipped checkpoint.
Greedy translations equal Translator.translate(num_beams=1), the maps match the server's to 1e-3, the pieces and
the sentences are the tokenizer's and tokenizer.sentences', and bad input gets the server's words."""

import gzip
import http.server
import os
import re

import numpy as np
import pytest

from data import find_corpus
from lens.maps import explain
from tests.test_ui_page import CHECKPOINT, CHROMIUM, browser, open_page, server  # noqa: F401  (fixtures)
from tokenizer import load_tokenizer
from tokenizer.sentences import split_sentences
from training_data.domain import load_domain
from ui.export_site import FIRST_VISIT_BYTES, MAX_BYTES
from ui.pair import Pair
from ui.translate import page_handler

EVERYDAY_CHECKPOINT = CHECKPOINT.parent / "de-en-everyday"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
]

ODD = [
    "Emoji 😀👍🏽 und 🇩🇪 🤷‍♀️",
    "中文字符 日本語",
    "a\u0000b\u0007c\u001b[0m",
    "\ufeffBOM",
    "tab\tneu\nzeile\r\n",
    "<s> </s> <pad> <unk>",
    "Straße Ärger A\u0308rger",
    "\u00a0nbsp\u2003em\u3000ideo",
    "don't I'll",
    "Zahl١٢٣",
    "x" * 3000,
    "  zwei  Leerzeichen ",
    "Dr. Müller kommt am 1. Mai. Ich bin 25. Ich wohne in Berlin. z. B. hier!",
]
NOT_GERMAN = [
    "Where is the station?",
    "I would like a beer.",
    "你好，我是学生。",
    "こんにちは。",
    "😀😀",
    "12345",
    "我喜欢用Python写代码。",
]
EVERYDAY = [
    "Ich möchte ein Bier.",
    "Wo ist der Bahnhof?",
    "Kannst du mir helfen?",
    "Ich habe keine Zeit.",
    "Das Wetter ist heute schön.",
    "Hast du Lust auf ein Bier?",
    "Wie geht's dir?",
    "Es regnet seit gestern!",
]


def val(n: int) -> list[str]:
    """The first n German sentences of Multi30k's validation split."""
    try:
        folder = find_corpus()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    with gzip.open(folder / "val.de.gz", "rt", encoding="utf-8") as f:
        return [line.strip() for _, line in zip(range(n), f)]


@pytest.fixture(scope="module")
def shipped_translator(site_folder):
    """The shipped checkpoint computing with the weights the site ships (int8 by default), as the page does."""
    from translation import Translator
    from ui.row_int8 import computing_with

    folder, _ = site_folder
    return computing_with(Translator.from_pretrained(CHECKPOINT, device="cpu"), folder / "weights.safetensors")


def everyday_of(folder):
    """The everyday checkpoint computing with the weights a pair site ships for it."""
    from translation import Translator
    from ui.row_int8 import computing_with

    return computing_with(
        Translator.from_pretrained(EVERYDAY_CHECKPOINT, device="cpu"), folder / "everyday/weights.safetensors"
    )


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        """A request is not news: nothing is logged."""


# `site`: the shipped checkpoint's static site served on loopback, one for the session (tests/conftest.py)


@pytest.fixture(scope="module")
def page(site, browser):
    url, _ = site
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors, asked = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def only_the_site(route):
        asked.append(route.request.url)
        route.continue_() if route.request.url.startswith(url) else route.abort()

    page.route("**/*", only_the_site)
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    yield page
    page.close()
    assert errors == [] and all(u.startswith(url) for u in asked), (errors, asked)


@pytest.fixture(scope="module")
def pair_page(site, site_folder, browser):
    """A fresh page of the session's site, with every request it makes recorded: the default model, and the everyday
    model that each sentence of everyday German goes to (fetched when one first does)."""
    url, sizes = site
    folder, _ = site_folder
    assert sum(sizes.values()) <= MAX_BYTES and "everyday/weights.safetensors" in sizes and "language.json.gz" in sizes
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors, asked = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: asked.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url) else route.abort())
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    yield page, asked, folder
    page.close()
    assert errors == [], errors


def test_the_page_routes_every_sentence_as_the_server_does(pair_page):
    """ui/routed.Router in the page (router.js): the same split, umlauts, recasing, Chinese, language check and model
    for each text."""
    from ui.routed import Router

    page, _, folder = pair_page
    router = Router.of_checkpoint(CHECKPOINT, chinese=(folder / "zh-en").is_dir())  # the site's models, as the app's
    texts = (
        val(150)
        + EVERYDAY
        + [t.lower() for t in val(30) + EVERYDAY]
        + [t.upper() for t in EVERYDAY]
        + ODD
        + NOT_GERMAN
        + ["wo ist der bahnhof? ein mann fährt fahrrad.", "Ich möchte ein Bier。Wo ist der Bahnhof？", ""]
    )
    ours = page.evaluate("(ts) => ts.map((t) => window.attentionLens.route(t))", texts)
    expected = [
        [
            {**router.route(read, written=written).to_dict(), "text": router.route(read).text}
            for written, read in router.split(t)
        ]
        for t in texts
    ]
    for text, a, b in zip(texts, ours, expected):
        assert [{**r, "recased": [list(p) for p in r["recased"]]} for r in a] == b, text


def test_everyday_german_is_translated_by_the_everyday_model_in_the_page(pair_page, shipped_translator):
    page, asked, folder = pair_page
    assert not any("everyday/" in u for u in asked)  # not fetched before a sentence needs it
    everyday = everyday_of(folder)
    x = page.evaluate(
        "(t) => window.attentionLens.translate(t, {num_beams: 1})", "wo ist der bahnhof? Ein Mann fährt Fahrrad."
    )
    first, second = x["sentences"]
    assert first["route"]["model"] == "everyday" and first["source"] == "Wo ist der Bahnhof?"
    assert first["translation"] == everyday.translate("Wo ist der Bahnhof?", num_beams=1)
    assert second["route"]["model"] == "default"
    assert second["translation"] == shipped_translator.translate("Ein Mann fährt Fahrrad.", num_beams=1)
    assert any("everyday/weights.safetensors" in u for u in asked)
    note = page.locator("#site-result .al-route").first.inner_text()
    assert "everyday model" in note and "Sentence 1" in note
    assert "bahnhof \u2192 Bahnhof" in page.locator("#site-result .al-recased").inner_text()
    forced = page.evaluate(
        "(t) => window.attentionLens.translate(t, {num_beams: 1, model: 'default'})", "Wo ist der Bahnhof?"
    )
    assert forced["sentences"][0]["route"]["model"] == "default" and forced["sentences"][0]["route"]["forced"]
    other = page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 1})", "私はビールが欲しい。")
    assert other["sentences"][0]["route"]["reads_like"] == "not German"
    assert "does not look like German" in page.locator("#site-result .al-not-german").inner_text()


def test_the_inside_views_in_the_page_ask_the_sentences_own_model(pair_page):
    """Q/K/V opened in the page for a sentence of everyday German is the everyday model's row, as /qkv answers it."""
    from lens.explain import DecodingOptions
    from lens.qkv import qkv

    page, _, folder = pair_page
    everyday = everyday_of(folder)
    sentence = "Wo ist der Bahnhof?"
    ours = page.evaluate(
        "(t) => window.attentionLens.callApi('qkv', [t, 'cross', 2, 1, 2, 'greedy', 1, 1.0, 64, 'auto'])", sentence
    )
    theirs = qkv(everyday, sentence, "cross", 2, 1, 2, DecodingOptions(1, 1.0, 64)).to_dict()
    assert ours["column_tokens"] == theirs["column_tokens"]
    assert np.allclose(ours["weights"], theirs["weights"], atol=1e-3)


def test_the_site_is_small_and_a_static_space(site):
    url, sizes = site
    assert sum(sizes.values()) <= MAX_BYTES and sizes["weights.safetensors"] < 16 * 2**20
    assert {
        "index.html",
        "README.md",
        "tokenizer.json",
        "config.json",
        "site.json",
        "static/kernels.wasm",
        "domain.json.gz",
    } <= set(sizes)


def test_a_first_visit_downloads_at_most_ten_megabytes_before_its_first_map(site, browser):
    """A cold cache (a new page's own context): every byte the page fetched until its first map is drawn. The
    everyday model and the Code view's files wait until they are needed."""
    url, _ = site
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    fetched = {}
    page.on("requestfinished", lambda r: fetched.__setitem__(r.url, r.sizes()["responseBodySize"]))
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    page.wait_for_selector("#site-result canvas", timeout=20_000)  # ready: the first map is drawn
    first_visit = sum(fetched.values())
    page.close()
    assert fetched[url + "weights.safetensors"] > 5 * 2**20  # the model came, in int8
    assert first_visit <= FIRST_VISIT_BYTES, {u: n for u, n in fetched.items() if n > 100_000}
    assert not any("everyday/" in u or u.endswith("code.json") for u in fetched)


def test_the_page_guesses_the_kind_of_german_as_the_server_does(page):
    """training_data/domain.py's guess, computed in the page from the checkpoint's file: the same report for every text."""
    guess = load_domain(CHECKPOINT)
    texts = val(200) + EVERYDAY + ODD + [""]
    ours = page.evaluate("(ts) => ts.map((t) => window.attentionLens.domain(t))", texts)
    assert ours == [guess.report(t) for t in texts]
    assert sum(r["everyday"] for r in ours[:200]) <= 10 and all(r["everyday"] for r in ours[200 : 200 + len(EVERYDAY)])


def test_greedy_translations_and_maps_equal_the_servers(page, shipped_translator):
    sentences = val(40)
    expected = shipped_translator.translate(sentences, num_beams=1)
    worst = 0.0
    for text, english in zip(sentences, expected):
        payload = page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 1, max_new_tokens: null})", text)
        assert payload["translation"] == english, text
        maps = page.evaluate("() => window.attentionLens.maps()")[0]
        server = explain(shipped_translator, text, num_beams=1)
        for kind in ("encoder", "decoder", "cross"):
            ours = getattr(server, kind)
            worst = max(worst, float(np.abs(np.asarray(maps[kind]).reshape(ours.shape) - ours).max()))
    assert worst < 1e-3, worst


def test_beam_search_writes_what_the_server_writes(page, shipped_translator):
    sentences = val(12)
    expected = shipped_translator.translate(sentences, num_beams=4)
    got = [
        page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 4, max_new_tokens: null})", t)[
            "translation"
        ]
        for t in sentences
    ]
    assert got == expected
    # the winner's maps and probabilities, kept by the search itself (no second pass), are the server's
    for text in sentences[:4]:
        payload = page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 4, max_new_tokens: null})", text)
        maps = page.evaluate("() => window.attentionLens.maps()")[0]
        server = explain(shipped_translator, text, num_beams=4)
        for kind in ("decoder", "cross"):
            ours = getattr(server, kind)
            assert np.abs(np.asarray(maps[kind]).reshape(ours.shape) - ours).max() < 1e-3, kind
        assert np.allclose(payload["sentences"][0]["probs"], server.target_probs, atol=2e-3)


def test_the_pieces_and_the_sentences_are_pythons(page):
    tokenizer = load_tokenizer(CHECKPOINT)
    texts = val(200) + ODD
    pieces = page.evaluate("(ts) => ts.map((t) => window.attentionLens.pieces(t))", texts)
    assert pieces == [tokenizer.encode(t, add_special_tokens=False).ids for t in texts]
    split = page.evaluate("(ts) => ts.map((t) => window.attentionLens.sentences(t))", texts)
    assert split == [split_sentences(t) for t in texts]


@pytest.mark.parametrize("text", ["", "   ", "Ein Hund. " * 17, "x" * 5001, "Ein \ud800 Hund"])
def test_bad_input_gets_the_servers_words(page, shipped_translator, text):
    server = page_handler(Pair.single(shipped_translator))(text, "greedy", 1, 1.0, 128)
    ours = page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 1})", text)
    key = "message" if "message" in server else "error"
    assert ours.get(key) == server[key], (ours, server)


def test_the_inside_views_open_in_the_page(page):
    page.evaluate("() => window.attentionLens.translate('Ein Mann mit einem roten Hut fährt Fahrrad.', {num_beams: 1})")
    page.click(".al-spine [data-name='Decoder layer 3']")
    page.click(".al-spine-detail [data-opens='openLadder']")
    page.wait_for_selector("#site-result .al-ladder-table", timeout=20_000)
    page.click("#site-result .al-open-cell")
    page.wait_for_selector("#site-result .al-qkv-title", timeout=20_000)
    page.click(".al-spine-detail [data-opens='openContributions']")
    page.wait_for_selector("#site-result .al-who-table", timeout=20_000)  # who wrote each word, ALTI+ in the page


def test_the_payload_is_the_one_the_server_sends(page, shipped_translator):
    from ui.routed import Router

    handler, router = page_handler(Pair.single(shipped_translator)), Router.of_checkpoint(CHECKPOINT, everyday=False)
    texts = val(20) + ["Ein Mann fährt Fahrrad. Zwei Kinder bauen am Strand eine Sandburg.", "Emoji 😀 und Straße."]
    for text in texts:
        server = handler(text, "greedy", 1, 1.0, 128)
        ours = page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 1, max_new_tokens: 128})", text)
        assert [s["source"] for s in ours["sentences"]] == [s["source"] for s in server["sentences"]]
        for a, b in zip(ours["sentences"], server["sentences"]):
            assert (a["translation"], a["tokens"], a["words"]) == (b["translation"], b["tokens"], b["words"]), text
            assert (
                np.allclose(a["probs"], b["probs"], atol=2e-3) and abs(a["mean_log_prob"] - b["mean_log_prob"]) < 2e-3
            )
            route = {**router.route(b["source"]).to_dict(), "recased": []}
            assert a["unfamiliar"] == b["unfamiliar"] and a["route"] == route
        assert {k: ours[k] for k in ("layers", "heads", "max_len", "left_out")} == {
            k: server[k] for k in ("layers", "heads", "max_len", "left_out")
        }


def test_on_the_app_compute_in_my_browser_asks_the_server_nothing(browser, server):
    page = open_page(browser, server, closed=True)
    page.wait_for_selector("#result .al-spine .al-block", timeout=60_000)
    page.locator("#options > button").first.click()
    from playwright.sync_api import expect

    assert page.evaluate("() => document.querySelector('#page-header').dataset.inBrowser")  # the app serves the files
    expect(page.locator("#in-browser")).to_be_visible(timeout=10_000)  # in Options, once it has opened
    page.locator("#in-browser input").check()
    asked = []
    page.on(
        "request", lambda r: asked.append(r.url) if "/gradio_api/queue/join" in r.url or "/call/" in r.url else None
    )
    before = page.locator("#result .al-result").get_attribute("data-shown")
    page.locator("#source textarea").fill("Zwei Hunde spielen im Schnee.")
    page.locator("#translate").click()
    page.wait_for_function(
        "(b) => { const r = document.querySelector('#result .al-result');"
        " return r.dataset.shown && r.dataset.shown !== b && !r.classList.contains('al-busy'); }",
        arg=before,
        timeout=60_000,
    )
    assert "this browser" in page.locator("#result .al-status").inner_text()
    assert page.locator("#result .al-english").inner_text().strip() == "Two dogs are playing in the snow."
    assert (
        asked == []
        and page.evaluate("() => window.attentionLens.state().views.translate") == "Zwei Hunde spielen im Schnee."
    )
    # everyday German, computed here by the everyday model (its files fetched now), and the page says so
    before = page.locator("#result .al-result").get_attribute("data-shown")
    page.locator("#source textarea").fill("Wo ist der Bahnhof?")
    page.locator("#translate").click()
    page.wait_for_function(
        "(b) => { const r = document.querySelector('#result .al-result');"
        " return r.dataset.shown && r.dataset.shown !== b && !r.classList.contains('al-busy'); }",
        arg=before,
        timeout=60_000,
    )
    note = page.locator("#result .al-route")
    expect(note).to_contain_text("Translated by the everyday model: it reads like everyday German")
    assert page.locator("#result .al-english").inner_text().strip() == "Where's the station?"
    assert asked == [] and not page.locator("#compare input").is_checked()
    page.close()


def test_the_site_speaks_chinese_to_a_chinese_browser_and_offers_the_switch(site, browser):
    from tests.test_locale_page import MOST, english

    url, _ = site
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="zh-CN")
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url) else route.abort())
    page.goto(url)  # no ?lang=: the browser's language
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert page.inner_text("#site-translate").strip() == "翻译"
    assert "个参数" in page.inner_text("#site-status")
    words = english(page)
    assert len(words) <= MOST, words
    page.click("#site-header .al-lang")
    page.wait_for_url(lambda u: "lang=en" in u)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    assert page.inner_text("#site-translate").strip() == "Translate"
    assert "parameters" in page.inner_text("#site-status")
    assert errors == []
    context.close()


CODE_SENTENCES = ["Ein Hund.", "Ich möchte ein Bier.", "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau."]


@pytest.mark.parametrize("layer", [1, 3])
def test_the_code_view_in_the_page_reads_the_taps_the_server_reads(page, shipped_translator, layer):
    """/code answered by the page's own teacher-forced pass (taps.js): the same lines, shapes and numbers as
    lens/code.py for three sentences of different lengths."""
    from lens.code import code_view
    from lens.explain import DecodingOptions

    for text in CODE_SENTENCES:
        drawn = page.evaluate(
            "([text, layer]) => window.attentionLens.callApi('code', [text, layer, 'greedy', 1, 1.0, 128, 'default'])",
            [text, layer],
        )
        expected = code_view(shipped_translator, text, layer, DecodingOptions(num_beams=1))
        assert drawn["files"] == expected["files"] and drawn["layers"] == expected["layers"]
        assert [(t["tap"], t["line"], t["shape"]) for t in drawn["taps"]] == [
            (t["tap"], t["line"], t["shape"]) for t in expected["taps"]
        ], text
        for got, want in zip(drawn["taps"], expected["taps"]):
            scale = max(1.0, abs(want["std"] or 0.0))
            for field in ("mean", "std"):
                assert abs(got[field] - want[field]) <= 2e-3 * scale, (
                    text,
                    got["name"],
                    field,
                    got[field],
                    want[field],
                )
            np.testing.assert_allclose(got["first"], want["first"], atol=2e-3 * scale, err_msg=got["name"])


def test_the_code_view_opens_in_the_page_and_refuses_a_layer_by_name(page):
    page.evaluate("() => window.attentionLens.translate('Ich möchte ein Bier.', {num_beams: 1})")
    page.locator("#site-result [data-view='openCode']").dispatch_event("click")
    page.wait_for_selector("#site-result .al-code-view", timeout=60_000)
    shapes = page.eval_on_selector_all("#site-result .al-code-line[data-tap]", "(ls) => ls.map((l) => l.dataset.shape)")
    assert len(shapes) >= 10 and all(re.fullmatch(r"\d+(×\d+)+( \d+(×\d+)+)*", s) for s in shapes), shapes
    refused = page.evaluate(
        "() => window.attentionLens.callApi('code', ['Ein Hund.', 9, 'greedy', 1, 1.0, 128, 'default'])"
        ".then(() => null, (e) => e.message)"
    )
    assert refused == "layer must be a whole number from 1 to 3, got 9"
