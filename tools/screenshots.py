"""The page's screenshots in docs/screenshots/, taken from a started app.py in Debian's chromium.

    python tools/screenshots.py [--only first-visit-desktop tour-desktop ...] [--out docs/screenshots]

Each shot opens the page (from a link where the state is in it), waits until it is drawn, and
writes a PNG at 1366x768 or 390x844. The shots of the other views (step, head lab, time travel,
copy lab) were taken by hand and are not rewritten here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from ui.app_process import chromium, launch_app  # noqa: E402

DESKTOP, PHONE = (1366, 768), (390, 844)
READY = "() => window.attentionLens && window.attentionLens.state().views.translate"
SENTENCE = "Zwei Hunde spielen im Schnee."
WALK = "Ein Mann mit einem roten Hut fährt Fahrrad."  # the sentence README walks through the inside views


def tour(page):
    page.click(".al-tour-start")
    for _ in range(13):
        page.click(".al-tour-next")  # stop 14: cross-attention


def guess(page):
    page.wait_for_function(f"() => window.attentionLens.state().views.step === {SENTENCE!r}", timeout=60_000)
    page.click("#step-result .st-guess-toggle")
    page.locator("#step-result .st-src .st-chip-guess").nth(1).click()
    page.locator("#step-result .st-attn").scroll_into_view_if_needed()


def why(page):
    page.wait_for_function("() => window.attentionLens.state().step === 2", timeout=60_000)
    page.click("#step-result .st-why-ask")
    page.wait_for_selector("#step-result .st-why-lead", timeout=60_000)
    page.locator("#step-result .st-why").scroll_into_view_if_needed()


def inside(view: str, ready: str):
    """Open one of the inside views under the translation and wait for its drawing."""

    def action(page):
        page.wait_for_function(
            "() => (document.querySelector('#result .al-english') || {}).textContent.includes('red hat')",
            timeout=60_000,
        )  # the linked sentence, not the first visit's
        page.locator(f"#result [data-view='{view}']").dispatch_event("click")  # as the picture's blocks press it
        page.wait_for_selector(f"#result {ready}", timeout=60_000)
        page.locator("#result .al-ladder-panel").scroll_into_view_if_needed()
        page.mouse.wheel(0, 120)

    return action


def inside_step(page):
    page.wait_for_function(f"() => window.attentionLens.state().views.step === {WALK!r}", timeout=60_000)
    page.click("#step-result .st-inside-open")
    page.wait_for_selector("#step-result .st-inside-line", timeout=60_000)
    page.locator("#step-result .st-inside").scroll_into_view_if_needed()


def layer(name: str, sublayer: str | None = None, ready: str | None = None):
    """Open a layer block of the picture (and one of its sublayers), as a visitor would."""

    def action(page):
        page.wait_for_function(
            "() => (document.querySelector('#result .al-english') || {}).textContent.includes('red hat')",
            timeout=60_000,
        )
        page.click(f".al-spine [data-name='{name}']")
        if sublayer:
            page.click(f".al-spine [data-name^='{sublayer}']")
        if ready:
            page.wait_for_selector(ready, timeout=60_000)
        page.locator(".al-spine").scroll_into_view_if_needed()

    return action


def compare(page):
    page.locator("#result .al-see-other").click()
    page.wait_for_function(
        "() => { const r = document.querySelector('#second-result .al-result'); return r && r.dataset.shown; }",
        timeout=60_000,
    )


def legend(page):
    page.locator("#result .al-legend").scroll_into_view_if_needed()


def routed(page):
    """The line that says which model translated the sentence and why, and what the page recased."""
    page.wait_for_selector("#result .al-route", timeout=60_000)
    page.wait_for_function("() => !document.querySelector('#result .al-busy, #result .al-stale')", timeout=60_000)
    page.wait_for_timeout(2000)  # the link's sentence may be asked for again once the page has settled
    page.wait_for_function("() => !document.querySelector('#result .al-busy, #result .al-stale')", timeout=60_000)


def other_model(page):
    """The route line once it quotes the other model's English (its button pressed)."""
    page.locator("#result .al-see-other").click()
    page.wait_for_function("() => !!document.querySelector('#result .al-route-other')", timeout=60_000)
    page.evaluate("() => document.querySelector('#result .al-route').scrollIntoView({block: 'center'})")


HISTORY = "window.attentionLens.view('history')"


def history(page):
    """Time travel read to its last point (the shipped model), the slider's label naming its part of training."""
    page.locator("#history-go").click()
    page.wait_for_function(f"() => {HISTORY} && {HISTORY}.data && {HISTORY}.data.done", timeout=300_000)
    page.evaluate(f"() => {{ const h = {HISTORY}; h.pick(h.data.snapshots.length - 1); }}")
    page.evaluate("() => document.querySelector('#history-title').scrollIntoView()")


# name -> (viewport, URL fragment, what to do before the shot)
SHOTS = {
    "first-visit-desktop": (DESKTOP, {}, None),
    "first-visit-dark": (DESKTOP, {}, None),
    "picture-layer-desktop": (DESKTOP, {"s": WALK}, layer("Decoder layer 2")),
    "picture-cross-desktop": (
        DESKTOP,
        {"s": WALK},
        layer("Decoder layer 2", "Decoder layer 2 cross-attention", "#result .al-who-table"),
    ),
    "picture-ladder-desktop": (
        DESKTOP,
        {"s": WALK},
        layer("Decoder layer 3", "Decoder layer 3 feed-forward", "#result .al-ladder-table"),
    ),
    "picture-phone": (PHONE, {"s": WALK}, layer("Decoder layer 2")),
    "phone": (PHONE, {}, None),
    "phone-dark": (PHONE, {}, None),
    "tour-desktop": (DESKTOP, {}, tour),
    "tour-phone": (PHONE, {}, tour),
    "guess-desktop": (DESKTOP, {"s": SENTENCE, "view": "step"}, guess),
    "why-desktop": (DESKTOP, {"s": SENTENCE, "view": "step", "step": 2}, why),
    "desktop-decoder": (DESKTOP, {"s": SENTENCE, "kind": "decoder"}, legend),
    "compare-desktop": (DESKTOP, {"s": "Ich möchte ein Bier."}, compare),
    "who-desktop": (DESKTOP, {"s": WALK}, inside("openContributions", ".al-who-table")),
    "who-phone": (PHONE, {"s": WALK}, inside("openContributions", ".al-who-table")),
    "patch-desktop": (DESKTOP, {"s": WALK}, inside("openPatch", ".al-patch-grid")),
    "patch-phone": (PHONE, {"s": WALK}, inside("openPatch", ".al-patch-grid")),
    "inside-step-desktop": (DESKTOP, {"s": WALK, "view": "step", "step": 6}, inside_step),
    "inside-step-phone": (PHONE, {"s": WALK, "view": "step", "step": 6}, inside_step),
    "tour-desktop-dark": (DESKTOP, {}, tour),
    "guess-phone-dark": (PHONE, {"s": SENTENCE, "view": "step"}, guess),
    "everyday-desktop": (DESKTOP, {"s": "Wo ist der Bahnhof?"}, routed),
    "everyday-phone": (PHONE, {"s": "Wo ist der Bahnhof?"}, routed),
    "lowercase-desktop": (DESKTOP, {"s": "ich möchte ein bier"}, routed),
    "lowercase-phone": (PHONE, {"s": "ich möchte ein bier"}, routed),
    "not-german-desktop": (DESKTOP, {"s": "你好，我想喝啤酒。"}, routed),
    "other-model-desktop": (DESKTOP, {"s": "Wo ist der Bahnhof?"}, other_model),
    "history-desktop": (DESKTOP, {"s": WALK, "view": "history"}, history),
}


def in_browser(page):
    """The app computing in the visitor's browser: the everyday sentence translated there by the everyday model."""
    page.locator("#options > button").first.click()
    page.locator("#in-browser input").check()
    page.locator("#translate").click()
    page.wait_for_function(
        "() => (document.querySelector('#result .al-status') || {}).textContent"
        ".includes('this browser') && !!document.querySelector('#result .al-route')",
        timeout=120_000,
    )
    page.locator("#options > button").first.click()


SHOTS["inbrowser-everyday-desktop"] = (DESKTOP, {"s": "Wo ist der Bahnhof?"}, in_browser)


def walk_stop(i: int):
    """Open stop i of the walk (counted from 0) and wait for its card."""

    def action(page):
        page.evaluate(f"window.attentionLens.walkTo({i})")
        page.wait_for_selector(".al-tour")
        page.wait_for_timeout(800)

    return action


def glossary(page):
    """The glossary, from the last item of the picture's whole-model list."""
    page.click("#result .al-spine-toggle")
    page.locator("#result .al-spine-whole .al-block").last.click()
    page.wait_for_selector("dialog.al-glossary[open]")


def code(page):
    """The Code view of the linked sentence, at the line of the positional encoding's question."""
    page.wait_for_function(
        "() => window.attentionLens.state().views.translate === 'Ich möchte ein Bier.'", timeout=60_000
    )
    page.locator("#result [data-view='openCode']").dispatch_event("click")  # as the picture's item presses it
    page.wait_for_selector("#result .al-code-view", timeout=60_000)
    page.locator("#result .al-code-questions").scroll_into_view_if_needed()


SHOTS["code-desktop"] = (DESKTOP, {"s": "Ich möchte ein Bier."}, code)
SHOTS["code-phone-zh"] = (PHONE, {"s": "Ich möchte ein Bier."}, code)


def step(concept: str, place: dict | None = None):
    """One of the picture's twelve steps opened (concepts.js), drawn with the linked sentence's numbers."""

    def action(page):
        page.evaluate(
            "([id, place]) => window.attentionLens.concepts().find((c) => c.id === id).open(place)", [concept, place]
        )
        page.wait_for_selector(f"[data-concept='{concept}'] .al-concept-taps", timeout=60_000)
        page.evaluate(
            "(id) => document.querySelector(`[data-concept='${id}']`).scrollIntoView({block: 'nearest'})", concept
        )

    return action


STEP_PLACES = {
    "tokens": None,
    "embedding": None,
    "positional-encoding": None,
    "qkv-projection": {"kind": "encoder", "layer": 0, "head": 0},
    "scores": {"kind": "encoder", "layer": 0, "head": 0},
    "mask": {"kind": "decoder", "layer": 0, "head": 0},
    "softmax": {"kind": "encoder", "layer": 1, "head": 1},
    "heads-concat": {"kind": "encoder", "layer": 0, "row": 4},
    "residual-layernorm": {"kind": "encoder", "layer": 0, "row": 4},
    "feed-forward": {"kind": "encoder", "layer": 0, "row": 4},
    "cross-attention": {"kind": "cross", "layer": 2, "head": 0},
    "logits-softmax": {"kind": "decoder", "row": 1},
}
BEER = {"s": "Ich möchte ein Bier."}
SHOTS.update({f"step-{c}-desktop": (DESKTOP, BEER, step(c, p)) for c, p in STEP_PLACES.items()})
SHOTS.update(
    {
        f"step-{c}-phone": (PHONE, BEER, step(c, STEP_PLACES[c]))
        for c in ("tokens", "positional-encoding", "scores", "residual-layernorm", "cross-attention", "logits-softmax")
    }
)
SHOTS.update(
    {f"step-{c}-dark": (DESKTOP, BEER, step(c, STEP_PLACES[c])) for c in ("qkv-projection", "softmax", "feed-forward")}
)


# The page in Chinese: a name with "-zh" opens with ?lang=zh-CN in a Chinese browser (ui/static/locale.js).
SHOTS.update(
    {
        "first-visit-zh": (DESKTOP, {}, None),
        "phone-zh": (PHONE, {}, None),
        "walk-guess-desktop": (DESKTOP, {}, walk_stop(3)),
        "walk-guess-zh": (DESKTOP, {}, walk_stop(3)),
        "walk-guess-phone-zh": (PHONE, {}, walk_stop(3)),
        "guess-zh": (DESKTOP, {"s": SENTENCE, "view": "step"}, guess),
        "glossary-zh": (DESKTOP, {}, glossary),
        "not-german-zh": (DESKTOP, {"s": "私はビールが欲しい。"}, routed),
        # the Chinese model (checkpoints/zh-en): its cross-attention, in Chinese and in English, and on a phone
        "chinese-zh": (DESKTOP, {"s": "我昨天去了商店。"}, None),
        "chinese-phone-zh": (PHONE, {"s": "我想要一杯啤酒。"}, None),
        "chinese-desktop": (DESKTOP, {"s": "我們昨天去了商店，買了很多東西。"}, routed),
    }
)
# The static site (python -m ui.export_site, both models), served from a local folder: name -> (viewport, text)
SITE_SHOTS = {
    "site-everyday-desktop": (DESKTOP, "Wo ist der Bahnhof? Ein Mann fährt Fahrrad."),
    "site-everyday-phone": (PHONE, "ich möchte ein bier"),
    "site-zh-desktop": (DESKTOP, "Wo ist der Bahnhof? Ein Mann fährt Fahrrad."),
}
CAPTION = "Ein weißer Junge fegt eine Veranda mit einem großen Besen."
HEADS_OFF = '{"encoder":[[1,1,1,1],[1,1,1,1],[1,1,1,1]],"decoder":[[1,1,1,1],[1,1,1,1],[1,1,1,1]],"cross":[[1,1,1,1],[1,1,1,1],[0,0,0,0]]}'
# The site's views, each run in the page and shot where it opens: (its section, the script that runs it).
VIEW_RUNS = {
    "step": (
        "#site-step",
        "async () => { document.querySelector('#site-step').open = true; await window.attentionLens.step("
        f"'{CAPTION}', 4); document.querySelectorAll('#site-step .st-cand')[1].click(); "
        "await new Promise((r) => setTimeout(r, 1500)); }",
    ),
    "headlab": (
        "#site-headlab",
        "async () => { document.querySelector('#site-headlab').open = true; await window.attentionLens.headLab("
        f"'Ein Mann isst in einem Restaurant zu Mittag.', '{HEADS_OFF}'); }}",
    ),
    "history": (
        "#site-history",
        "async () => { document.querySelector('#site-history').open = true; await window.attentionLens.travel("
        "'Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.'); await window.attentionLens.travelTo(1); "
        "const s = document.querySelector('#site-history .al-h-slider'); s.value = 1; s.dispatchEvent(new Event('input')); }",
    ),
    "copylab": (
        "#site-copylab",
        "async () => { document.querySelector('#site-copylab').open = true; await window.attentionLens.copyLab("
        "{n_layers: 1, n_heads: 2, d_model: 32, lr: 0.005, steps: 200}); }",
    ),
    "compare": (
        "#site-results",
        f"async () => {{ await window.attentionLens.compare('{CAPTION}', {{num_beams: 4}}); }}",
    ),
}
for _view in VIEW_RUNS:
    SITE_SHOTS[f"site-{_view}-desktop"] = (DESKTOP, CAPTION)
    SITE_SHOTS[f"site-{_view}-phone"] = (PHONE, CAPTION)


def site_shots(out: Path, names: list[str]) -> None:
    """The static site's shots: exported to a temporary folder and served on loopback."""
    import functools
    import http.server
    import tempfile
    import threading

    from ui.export_site import export_site

    with tempfile.TemporaryDirectory() as folder, chromium() as browser:
        export_site(folder, ROOT / "checkpoints" / "de-en", everyday=ROOT / "checkpoints" / "de-en-everyday")
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=folder)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        for name in names:
            (width, height), text = SITE_SHOTS[name]
            zh = "-zh" in name
            page = browser.new_page(viewport={"width": width, "height": height}, locale="zh-CN" if zh else "en-US")
            page.goto(f"http://127.0.0.1:{server.server_port}/" + ("?lang=zh-CN" if zh else ""))
            page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=120_000)
            page.evaluate(
                "(t) => { document.querySelector('#site-source').value = t; "
                "return window.attentionLens.translate(t, {num_beams: 4}); }",
                text,
            )
            view = name.split("-")[1]
            if view in VIEW_RUNS:  # a view beside the translation, run in the page and shot where it opens
                section, run = VIEW_RUNS[view]
                page.evaluate(run)
                page.wait_for_timeout(600)
                page.locator(section).scroll_into_view_if_needed()
                page.evaluate("(s) => document.querySelector(s).scrollIntoView({block: 'start'})", section)
            page.wait_for_timeout(400)
            page.screenshot(path=str(out / f"{name}.png"))
            print("wrote", out / f"{name}.png", flush=True)
            page.close()
        server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only", nargs="*", choices=sorted(SHOTS) + sorted(SITE_SHOTS), default=sorted(SHOTS) + sorted(SITE_SHOTS)
    )
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument(
        "--second",
        default=str(ROOT / "checkpoints" / "de-en-everyday"),
        help="the model the page compares with ('none': no comparison)",
    )
    args = parser.parse_args()
    site = [name for name in args.only if name in SITE_SHOTS]
    if site:
        site_shots(Path(args.out), site)
    args.only = [name for name in args.only if name in SHOTS]
    if not args.only:
        return
    proc, url = launch_app(Path("/tmp/screenshots-app.log"), MODEL_ID=args.checkpoint, EVERYDAY_MODEL_ID=args.second)
    try:
        with chromium() as browser:
            for name in args.only:
                (width, height), state, action = SHOTS[name]
                zh = "-zh" in name
                page = browser.new_page(viewport={"width": width, "height": height}, locale="zh-CN" if zh else "en-US")
                query = [q for q, on in (("__theme=dark", name.endswith("-dark")), ("lang=zh-CN", zh)) if on]
                page.goto(url + ("?" + "&".join(query) if query else "") + ("#" + urlencode(state) if state else ""))
                page.wait_for_function(READY, timeout=60_000)
                if action:
                    action(page)
                page.wait_for_timeout(400)
                page.screenshot(path=str(Path(args.out) / f"{name}.png"))
                print("wrote", Path(args.out) / f"{name}.png", flush=True)
                page.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
