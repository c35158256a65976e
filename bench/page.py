"""The page in a real browser: how fast a learner sees the translation and the maps, how fast
switching redraws, and how big one explanation is. Playwright driving Debian's chromium against
app.py (the shipped checkpoint), medians over repeated runs.

    python bench/page.py [--checkpoint checkpoints/de-en] [--repeats 10] [--app-root ../other-checkout]

Click times are measured inside the page (performance.now() at the click, then after the next
painted frame), so Playwright's own round trips are not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.app import start_server  # noqa: E402

SENTENCE_15 = "Ein älterer Mann mit einem roten Hut geht mit seinem braunen Hund an einer langen Leine spazieren."
LONG = (
    "Ein Mann mit einem roten Hut und eine Frau mit einer blauen Jacke gehen mit ihren zwei kleinen Hunden "
    "an einem sonnigen Tag durch einen großen grünen Park in der Nähe eines Sees und "
) * 4 + "lachen."
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

CLICK_AND_WAIT = """async ([selector, before]) => {
  const result = document.querySelector('.al-result');
  const t0 = performance.now();
  document.querySelector(selector).click();
  await new Promise((resolve) => {
    const check = () => (result.dataset.shown && result.dataset.shown !== before && !result.classList.contains('al-busy'))
      ? resolve() : setTimeout(check, 2);
    check();
  });
  await new Promise((r) => requestAnimationFrame(r));
  // the answer's arrival: on the page's door (an older checkout's page keeps it on window.AttentionLens)
  const door = window.attentionLens && window.attentionLens.arrived ? window.attentionLens : window.AttentionLens;
  return [door.arrived - t0, performance.now() - t0];
}"""
SWITCH = """async (selector) => {
  const t0 = performance.now();
  document.querySelector(selector).click();
  await new Promise((r) => requestAnimationFrame(r));
  return performance.now() - t0;
}"""

# Each of the picture's twelve steps opened (concepts.js): ms from open() to drawn and painted, the first time
# (its taps asked of the back end) and again (kept for the sentence). An older page has no steps: {}.
STEPS = """async () => { const door = window.attentionLens, out = {};
  if (!door || !door.concepts) return out;
  for (const c of door.concepts()) { const times = [];
    for (let i = 0; i < 2; i++) { const t0 = performance.now(); await c.open();
      await new Promise((r) => requestAnimationFrame(r)); times.push(performance.now() - t0); }
    out[c.id] = times; }
  return out; }"""


def step_report(steps: dict) -> str:
    """One line: the steps' opening times, first and again (median, and the slowest first)."""
    if not steps:
        return "no steps in this page"
    first, again = [t[0] for t in steps.values()], [t[1] for t in steps.values()]
    slowest = max(steps, key=lambda k: steps[k][0])
    return (
        f"first open median {statistics.median(first):.0f} ms (slowest {slowest} {steps[slowest][0]:.0f} ms), "
        f"again median {statistics.median(again):.0f} ms"
    )


def payload_sizes(checkpoint: str) -> dict:
    """Bytes of the JSON the page receives for a 15-word sentence and a ~150-piece one."""
    from lens.explain import DecodingOptions, explain_text
    from translation import Translator
    from ui.payload import page_payload

    translator = Translator.from_pretrained(checkpoint, device="cpu")
    sizes = {}
    for name, text in (("15 words", SENTENCE_15), ("long", LONG)):
        result = explain_text(translator, text, DecodingOptions(4, 1.0, 200))
        payload = json.dumps(page_payload(result, translator.config, 0.1, "cpu"), separators=(",", ":"))
        s = result.sentences[0].explanation
        sizes[name] = (len(payload), len(s.source_tokens), len(s.target_tokens))
    return sizes


SHOTS = [  # name, viewport, dark, text, clicks after translating
    ("desktop", (1366, 768), False, "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.", []),
    ("desktop-dark", (1366, 768), True, "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.", []),
    (
        "desktop-lines",
        (1366, 768),
        False,
        "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.",
        [".al-view .al-choice[data-value='lines']", ".al-head .al-choice[data-value='1']"],
    ),
    (
        "desktop-decoder",
        (1366, 768),
        False,
        "Zwei Hunde spielen im hohen Gras mit einem orangen Spielzeug.",
        [".al-kind .al-choice[data-value='decoder']", ".al-level .al-choice[data-value='pieces']"],
    ),
    (
        "desktop-paragraph",
        (1366, 768),
        False,
        "Ein Mann fährt Fahrrad. Der Zug hat wegen eines Unfalls zwei Stunden Verspätung. Zwei Kinder bauen eine Sandburg.",
        [],
    ),
    ("phone", (390, 844), False, "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.", []),
    ("phone-dark", (390, 844), True, "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.", []),
]


def screenshots(url: str, folder: Path) -> None:
    """The README's pictures: desktop 1366x768 and phone 390x844, light and dark."""
    from playwright.sync_api import sync_playwright

    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for name, (width, height), dark, text, clicks in SHOTS:
            page = browser.new_page(
                viewport={"width": width, "height": height}, color_scheme="dark" if dark else "light"
            )
            page.goto(url + ("?__theme=dark" if dark else ""))
            page.wait_for_selector(".al-result")
            page.locator("#source textarea").fill(text)
            page.evaluate(CLICK_AND_WAIT, ["#translate", ""])
            if clicks:
                page.locator("#result .al-more-tools").click()  # the map's chips wait behind "More"
            for selector in clicks:
                page.locator(selector).click()
            page.wait_for_timeout(300)
            page.screenshot(path=str(folder / f"{name}.png"))
            if name.startswith("phone"):
                page.screenshot(path=str(folder / f"{name}-full.png"), full_page=True)
            page.close()
        browser.close()


FIRST_MAP = (
    "() => { const c = document.querySelector('#result .al-canvas');"
    " return c && c.getBoundingClientRect().height > 100; }"
)
LAYOUT_SHIFT = """() => new Promise((resolve) => { let sum = 0; new PerformanceObserver((list) => {
  for (const e of list.getEntries()) sum += e.value; }).observe({type: 'layout-shift', buffered: true});
  setTimeout(() => resolve(sum), 200); })"""


def fresh_visit(browser, url: str):
    """A page in a fresh context (nothing cached) opening `url`, and the time it started loading."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(url)
    return context, page, start


def measure_first_visits(browser, url: str, visits: int) -> list[tuple]:
    """Fresh contexts (nothing cached): load -> map on screen without a click (the start-up example), load ->
    viewer ready, then a typed sentence: arrival -> map, load -> its map, and the layout shift."""
    first_visit = []
    for _ in range(visits):
        context, page, start = fresh_visit(browser, url)
        page.wait_for_function(FIRST_MAP)
        unclicked = time.perf_counter() - start
        page.wait_for_selector(".al-result")
        ready = time.perf_counter() - start
        page.locator("#source textarea").fill(SENTENCE_15)
        before = page.locator("#result .al-result").get_attribute("data-shown") or ""
        arrived, painted = page.evaluate(CLICK_AND_WAIT, ["#translate", before])
        total = time.perf_counter() - start
        first_visit.append((ready, painted - arrived, total, page.evaluate(LAYOUT_SHIFT), unclicked))
        context.close()
    return first_visit


def measure_links(browser, url: str, visits: int) -> list[float]:
    """Fresh contexts: a shared link (sentence, kind, layer, head in its fragment) -> that map restored, seconds."""
    from urllib.parse import urlencode

    link = url + "#" + urlencode({"s": SENTENCE_15, "kind": "encoder", "layer": 2, "head": 3})
    restored = (
        f"() => {{ const s = window.attentionLens && window.attentionLens.state(); return s && "
        f"s.views.translate === {SENTENCE_15!r} && s.kind === 'encoder' && s.layer === 2 && s.head === 3; }}"
    )
    times = []
    for _ in range(visits):
        context, page, start = fresh_visit(browser, link)
        page.wait_for_function(restored, timeout=60_000)
        times.append(time.perf_counter() - start)
        context.close()
    return times


def measure_warm_page(browser, url: str, repeats: int) -> tuple[list, dict, int]:
    """One warm page: click -> translation and map, and every switch of the viewer (no request expected)."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(url)
    page.wait_for_selector(".al-result")
    page.locator("#source textarea").fill(SENTENCE_15)
    page.evaluate(CLICK_AND_WAIT, ["#translate", page.locator("#result .al-result").get_attribute("data-shown")])
    clicks = []
    for _ in range(repeats):
        before = page.locator("#result .al-result").get_attribute("data-shown")
        clicks.append(page.evaluate(CLICK_AND_WAIT, ["#translate", before]))
    steps = page.evaluate(STEPS)
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    switches = {"kind": [], "layer": [], "head": [], "token": [], "view": []}
    for _ in range(repeats):
        for name, values in (
            ("kind", ("encoder", "decoder", "cross")),
            ("layer", ("0", "1", "2")),
            ("head", ("0", "3", "mean")),
            ("view", ("lines", "matrix")),
        ):
            for value in values:
                switches[name].append(page.evaluate(SWITCH, f"#result .al-{name} .al-choice[data-value='{value}']"))
        box = page.locator("#result .al-canvas").bounding_box()
        start = time.perf_counter()
        page.mouse.click(box["x"] + 20, box["y"] + box["height"] * 0.6)  # a row's word: follow that token
        switches["token"].append((time.perf_counter() - start) * 1000)
    return clicks, switches, len(requests), steps


def report(args, clicks, switches, switch_requests, first_visit, links, steps) -> None:
    ms = lambda values: f"{statistics.median(values):7.1f} ms"  # noqa: E731
    print(
        f"bench/page.py: {args.checkpoint}, chromium headless, {os.cpu_count()} CPU cores "
        f"(load average {os.getloadavg()[0]:.1f}), medians of {args.repeats}"
    )
    print(
        f"  warm page, 15-word sentence: click -> translation on screen {ms([c[0] for c in clicks])}, "
        f"-> map on screen {ms([c[1] for c in clicks])}"
    )
    for name, values in switches.items():
        note = " (incl. Playwright's mouse round trip)" if name == "token" else ""
        print(f"  {name:6s} switch -> redrawn {ms(values)}{note}")
    print(f"  server requests during {sum(len(v) for v in switches.values())} switches: {switch_requests}")
    print(f"  the picture's twelve steps (numbers from the server's /taps): {step_report(steps)}")
    print(
        f"  first visit: page load -> map on screen without a click {ms([f[4] * 1000 for f in first_visit])}, "
        f"-> viewer ready {ms([f[0] * 1000 for f in first_visit])}, "
        f"translation arrived -> map on screen {ms([f[1] for f in first_visit])}, "
        f"load -> first typed sentence's map {ms([f[2] * 1000 for f in first_visit])}, "
        f"cumulative layout shift {statistics.median(f[3] for f in first_visit):.3f}"
    )
    print(f"  a shared link (15 words, encoder layer 2 head 3) -> that map restored {ms([t * 1000 for t in links])}")
    for name, (size, S, T) in payload_sizes(args.checkpoint).items():
        print(f"  payload, {name} ({S} source pieces, {T} target pieces): {size / 1024:.1f} KB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--app-root", type=Path, default=ROOT, help="another checkout's app.py (a before/after run)")
    parser.add_argument("--screenshots", type=Path, default=None, help="only take the screenshots, into this folder")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    proc, url = start_server(args.checkpoint, app_root=args.app_root)
    try:
        if args.screenshots:
            screenshots(url, args.screenshots)
            return
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            first_visit = measure_first_visits(browser, url, max(3, args.repeats // 3))
            links = measure_links(browser, url, max(3, args.repeats // 3))
            clicks, switches, switch_requests, steps = measure_warm_page(browser, url, args.repeats)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    report(args, clicks, switches, switch_requests, first_visit, links, steps)


if __name__ == "__main__":
    main()
