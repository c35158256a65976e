"""Measure the time-travel view and the copy lab in a browser, and take their screenshots.

    SNAPSHOTS_DIR=runs/x python app.py &          # an app serving a run with snapshots
    python bench/time_views.py --url http://127.0.0.1:7860/ [--shots docs/screenshots]

Prints: the Travel time (every snapshot read; then again, cached), the slider move time (in the
browser: from the slider's input to the map drawn), and a copy-lab run (steps, seconds, loss first
and last); with a second page queued behind the first, what that page shows while it waits.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEW = "window.attentionLens.view('history')"
LAB = "window.attentionLens.view('copylab')"


def travel(page) -> float:
    start = time.perf_counter()
    page.locator("#history-go").click()
    page.wait_for_function(
        f"(before) => {VIEW}.data.done && {VIEW}.root.dataset.shown !== before",
        arg=page.evaluate(f"() => {VIEW}.root.dataset.shown"),
        timeout=300_000,
    )
    return time.perf_counter() - start


def slider_ms(page) -> list[float]:
    """Each snapshot picked by the slider's input event; the pick draws synchronously."""
    return page.evaluate(f"""() => {{ const h = {VIEW}, out = [];
        for (let round = 0; round < 3; round++) for (let i = 0; i < h.data.snapshots.length; i++) {{
          const t0 = performance.now(); h.slider.value = i; h.slider.dispatchEvent(new Event('input'));
          out.push(performance.now() - t0); }}
        return out; }}""")


def lab_run(page) -> dict:
    start = time.perf_counter()
    page.locator("#copylab-train").click()
    page.wait_for_function(f"() => {LAB}.data && {LAB}.data.done", timeout=300_000)
    lab = page.evaluate(
        f"() => {{ const d = {LAB}.data; return {{updates: {LAB}.updates, step: d.step, "
        "elapsed: d.elapsed, first: d.losses[0][1], last: d.losses[d.losses.length - 1][1], "
        "accuracy: d.accuracy}; }"
    )
    return {**lab, "page_s": round(time.perf_counter() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860/")
    parser.add_argument("--shots", type=Path, default=None, help="folder for the screenshots (none if not given)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(args.url)
        page.wait_for_selector(".al-history .al-h-slider", timeout=120_000)
        print(f"travel: {travel(page):.2f} s the first time, {travel(page):.2f} s again (cached)")
        times = slider_ms(page)
        print(
            f"slider move: median {statistics.median(times):.1f} ms, max {max(times):.1f} ms "
            f"({len(times)} moves, in the browser)"
        )
        if args.shots:
            args.shots.mkdir(parents=True, exist_ok=True)
            page.evaluate(f"() => {{ const h = {VIEW}; h.pick(h.data.snapshots.length - 1); }}")
            page.evaluate("() => document.querySelector('#history-title').scrollIntoView()")
            page.screenshot(path=str(args.shots / "history-desktop.png"))
            page.evaluate(f"() => {{ const h = {VIEW}; h.pick(0); }}")
            page.screenshot(path=str(args.shots / "history-desktop-start.png"))
        print("copy lab:", lab_run(page))
        if args.shots:
            page.evaluate("() => document.querySelector('#copylab-settings').scrollIntoView()")
            page.screenshot(path=str(args.shots / "copylab-desktop.png"))
            phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
            phone.goto(args.url)
            phone.wait_for_selector(".al-history .al-h-slider", timeout=120_000)
            travel(phone)
            phone.evaluate(f"() => {{ const h = {VIEW}; h.pick(h.data.snapshots.length - 2); }}")
            phone.evaluate("() => document.querySelector('#history-source').scrollIntoView()")
            phone.screenshot(path=str(args.shots / "history-phone.png"))
            # A second page presses Train while the first trains: it waits in the queue.
            phone.evaluate("() => document.querySelector('#copylab-title').scrollIntoView()")
            page.locator("#copylab-train").click()
            time.sleep(1.0)
            phone.locator("#copylab-train").click()
            time.sleep(2.0)
            phone.screenshot(path=str(args.shots / "copylab-phone-queued.png"))
            print(
                "queued page shows:",
                phone.locator("#copylab-queue").inner_text()[:120].replace("\n", " "),
                "|",
                phone.locator(".al-c-status").inner_text()[:120],
            )
            phone.wait_for_function(f"() => {LAB}.data && {LAB}.data.done", timeout=300_000)
            phone.evaluate("() => document.querySelector('#copylab-actions').scrollIntoView()")
            phone.screenshot(path=str(args.shots / "copylab-phone.png"))
            dark = browser.new_page(viewport={"width": 1366, "height": 768})
            dark.goto(args.url + "?__theme=dark")
            dark.wait_for_selector(".al-history .al-h-slider", timeout=120_000)
            travel(dark)
            dark.evaluate("() => document.querySelector('#history-source').scrollIntoView()")
            dark.screenshot(path=str(args.shots / "history-dark.png"))
        browser.close()


if __name__ == "__main__":
    main()
