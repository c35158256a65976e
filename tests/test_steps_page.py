"""The picture's twelve steps (ui/static/concepts.js, steps.js) on the static site, in Chromium at a desktop's and a
phone's size: each opens in place as [data-concept=<id>], names the taps it draws, and draws the numbers of the
model's own taps (lens/tap_values.py on the shipped checkpoint, to 1e-3). window.attentionLens.concepts() is the
contract: the twelve ids in the paper's order."""

import math

import numpy as np
import pytest

from lens.explain import DecodingOptions
from lens.tap_values import tap_values
from tests.test_site import page as _page  # noqa: F401  (the fixtures)
from tests.test_site import pytestmark, shipped_translator  # noqa: F401
from tests.test_ui_page import browser  # noqa: F401

TEXT = "Ich möchte ein Bier."
IDS = [
    "tokens",
    "embedding",
    "positional-encoding",
    "qkv-projection",
    "scores",
    "mask",
    "softmax",
    "heads-concat",
    "residual-layernorm",
    "feed-forward",
    "cross-attention",
    "logits-softmax",
]
ROWS = (
    "(sel) => [...document.querySelectorAll(sel + ' tbody tr')].map((r) => [...r.children].map((c) => c.textContent))"
)


@pytest.fixture(scope="module", params=[(1366, 768), (390, 844)], ids=["desktop", "phone"])
def stepped(request, site, browser):  # noqa: F811
    url, _ = site
    page = browser.new_page(viewport={"width": request.param[0], "height": request.param[1]})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    page.evaluate("(text) => window.attentionLens.translate(text, {num_beams: 1, model: 'default'})", TEXT)
    yield page
    page.close()
    assert errors == [], errors


def opened(page, concept: str, place: dict | None = None):
    """Open a step through the contract; its element, drawn."""
    page.evaluate(
        "([id, place]) => window.attentionLens.concepts().find((c) => c.id === id).open(place)", [concept, place]
    )
    panel = page.locator(f"[data-concept='{concept}']")
    page.wait_for_selector(f"[data-concept='{concept}'] .al-concept-taps", timeout=20_000)
    assert panel.is_visible()
    return panel


def taps(translator, names):
    answer = tap_values(translator, TEXT, names, DecodingOptions(num_beams=1))
    return answer, {n: np.array(t["data"]).reshape(t["shape"]) for n, t in answer["taps"].items() if "data" in t}


def numbers(cells):
    return [float(c) for c in cells]


def test_concepts_are_the_twelve_steps_with_their_taps(stepped):
    listed = stepped.evaluate("() => window.attentionLens.concepts().map((c) => [c.id, c.title, c.taps])")
    assert [c[0] for c in listed] == IDS
    assert all(title and taps for _, title, taps in listed)
    assert dict((c[0], c[2]) for c in listed)["qkv-projection"] == [
        "encoder.0.self_attn.q",
        "encoder.0.self_attn.k",
        "encoder.0.self_attn.v",
    ]


def test_the_stream_steps_draw_the_taps(stepped, shipped_translator):  # noqa: F811
    answer, t = taps(shipped_translator, ["encoder.tokens", "encoder.embed"])
    opened(stepped, "tokens")
    ids = stepped.eval_on_selector_all(
        "[data-concept='tokens'] .al-step-chip small", "(s) => s.map((x) => x.textContent)"
    )
    assert ids == [f"#{i}" for i in answer["source_ids"]]
    opened(stepped, "embedding")
    rows = stepped.evaluate(ROWS, "[data-concept='embedding'] .al-step-numbers")
    assert numbers(rows[0][1:7]) == pytest.approx(t["encoder.tokens"][0, 0, :6] * 16, abs=1e-3)
    opened(stepped, "positional-encoding")
    assert f"1×{len(answer['source_ids'])}×256" in stepped.inner_text(
        "[data-concept='positional-encoding'] .al-step-shape"
    )
    rows = stepped.evaluate(ROWS, "[data-concept='positional-encoding'] .al-step-numbers")
    wave = t["encoder.embed"][0, 1, :6] - t["encoder.tokens"][0, 1, :6] * 16  # position 2
    assert numbers(rows[2][1:7]) == pytest.approx(wave, abs=1e-3)
    assert wave[0] == pytest.approx(math.sin(1), abs=1e-3)


def test_the_attention_steps_draw_the_taps(stepped, shipped_translator):  # noqa: F811
    place = {"kind": "decoder", "layer": 1, "head": 2, "row": 3}
    a = "decoder.1.self_attn"
    _, t = taps(shipped_translator, [f"{a}.q", f"{a}.scores", f"{a}.weights", f"{a}.heads", f"{a}.out", f"{a}.resid"])
    opened(stepped, "qkv-projection", place)
    rows = stepped.evaluate(ROWS, "[data-concept='qkv-projection'] .al-step-numbers")
    assert numbers(rows[0][1:7]) == pytest.approx(t[f"{a}.q"][0, 2, 0, :6], abs=1e-3)
    opened(stepped, "scores", place)
    cells = stepped.evaluate(ROWS, "[data-concept='scores'] .al-step-matrix")
    assert float(cells[2][1]) == pytest.approx(t[f"{a}.scores"][0, 2, 2, 0], abs=6e-3)
    opened(stepped, "mask", place)
    cells = stepped.evaluate(ROWS, "[data-concept='mask'] .al-step-matrix")
    assert cells[0][2] == "\u2212\u221e" and cells[1][2] != "\u2212\u221e"
    opened(stepped, "softmax", place)
    cells = stepped.evaluate(ROWS, "[data-concept='softmax'] .al-step-matrix")
    assert {row[-1] for row in cells} == {"1.000"}
    assert float(cells[3][1]) == pytest.approx(t[f"{a}.weights"][0, 2, 3, 0], abs=6e-3)
    opened(stepped, "heads-concat", place)
    rows = stepped.evaluate(ROWS, "[data-concept='heads-concat'] .al-step-numbers")
    assert numbers(rows[-1][1:7]) == pytest.approx(t[f"{a}.out"][0, 3, :6], abs=1e-3)
    assert numbers(rows[2][1:7]) == pytest.approx(t[f"{a}.heads"][0, 2, 3, :6], abs=1e-3)
    opened(stepped, "residual-layernorm", place)
    rows = stepped.evaluate(ROWS, "[data-concept='residual-layernorm'] .al-step-numbers")
    assert numbers(rows[-1][1:7]) == pytest.approx(t[f"{a}.resid"][0, 3, :6], abs=1e-3)
    assert float(rows[-1][-1]) == pytest.approx(t[f"{a}.resid"][0, 3].std(), abs=1e-3)


def test_the_feed_forward_cross_attention_and_output_draw_the_taps(stepped, shipped_translator):  # noqa: F811
    answer, t = taps(shipped_translator, ["encoder.2.ff.hidden", "decoder.2.cross_attn.weights", "logits"])
    opened(stepped, "feed-forward", {"kind": "encoder", "layer": 2, "row": 1})
    rows = stepped.evaluate(ROWS, "[data-concept='feed-forward'] .al-step-numbers")
    hidden = t["encoder.2.ff.hidden"][0, 1]
    assert numbers(rows[1][1:7]) == pytest.approx(hidden[:6], abs=1e-3)
    zeros = int((hidden == 0).sum())
    assert f"{zeros:,} of the 1,024" in stepped.inner_text("[data-concept='feed-forward']")
    opened(stepped, "cross-attention", {"kind": "cross", "layer": 2, "head": 1})
    cells = stepped.evaluate(ROWS, "[data-concept='cross-attention'] .al-step-matrix")
    assert float(cells[1][2]) == pytest.approx(t["decoder.2.cross_attn.weights"][0, 1, 1, 1], abs=6e-3)
    assert stepped.locator("[data-concept='cross-attention'] .al-bridge-line").count() > 0
    opened(stepped, "logits-softmax", {"kind": "decoder", "row": 0})
    pieces = stepped.eval_on_selector_all(
        "[data-concept='logits-softmax'] .al-step-piece", "(s) => s.map((x) => x.textContent)"
    )
    assert pieces == [p.lstrip("\u2581") for p in answer["taps"]["logits"]["top_tokens"][0][:10]]
    before = stepped.inner_text("[data-concept='logits-softmax'] .al-step-p")
    stepped.fill("[data-concept='logits-softmax'] .al-step-temperature", "2")
    stepped.dispatch_event("[data-concept='logits-softmax'] .al-step-temperature", "input")
    assert stepped.inner_text("[data-concept='logits-softmax'] .al-step-p") != before  # a hotter softmax is flatter


def test_a_step_opens_in_place_and_walks_to_the_next(stepped):
    opened(stepped, "scores")
    spine = stepped.locator(".al-spine .al-spine-encoder")
    top = spine.bounding_box()["y"]
    assert stepped.locator(".al-spine.al-spine-stepping .al-block.al-lit").count() >= 1
    stepped.click("[data-concept='scores'] .al-concept-nav[aria-label='The next step']")
    stepped.wait_for_selector("[data-concept='mask'] .al-concept-taps", timeout=20_000)
    assert spine.bounding_box()["y"] == top  # the picture did not move
    stepped.click("[data-concept='mask'] .al-concept-nav[aria-label='Close the step']")
    assert stepped.locator("[data-concept]").count() == 0 and stepped.locator(".al-lit").count() == 0


def test_hovering_a_piece_traces_it_through_the_step(stepped):
    opened(stepped, "positional-encoding")
    stepped.hover("[data-concept='positional-encoding'] .al-step-pe .al-strip-label[data-piece='2']")
    traced = stepped.eval_on_selector_all(
        "[data-concept='positional-encoding'] .al-traced", "(ns) => ns.map((n) => n.dataset.piece)"
    )
    assert traced == ["2"] * 4  # its label and its three strips: the embedding, the wave, the sum
    opened(stepped, "cross-attention", {"kind": "cross", "layer": 0, "head": 0})
    stepped.hover("[data-concept='cross-attention'] text[data-piece='1']", force=True)
    lines = stepped.eval_on_selector_all("[data-concept='cross-attention'] line.al-traced", "(ns) => ns.length")
    assert lines >= 1 and stepped.locator("[data-concept='cross-attention'] line:not(.al-traced)").count() >= 1
