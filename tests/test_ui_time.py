"""The time-travel view and the copy-task lab in a real browser (Debian's chromium), against app.py
serving a tiny translation run made here with snapshots at steps 0, 3 and 6; and their server parts."""

import os
import time
from pathlib import Path

import pytest

import train
import ui.time_travel
from lens.time_travel import SnapshotLibrary, find_snapshots
from tests.corpus import DATA_DIR, needs_corpus, tiny_run
from ui.app_process import CHROMIUM, chromium, running_app
from ui.copylab import lab_settings, time_limit

pytestmark = [pytest.mark.server]
ROOT = Path(__file__).resolve().parent.parent
browser_test = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed")
READY = "() => { const v = document.querySelector('.al-history'); return v.dataset.ready === 'true'; }"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A tiny translation run with three snapshots (a few seconds on one core)."""
    if not DATA_DIR.is_dir():
        pytest.skip(f"Multi30k not found in {DATA_DIR}: set MULTI30K_DIR")
    tmp = tmp_path_factory.mktemp("run")
    out = tmp / "de-en"
    assert (
        train.main(
            tiny_run(
                out,
                tmp / "work",
                6,
                3,
                "0,3,6",
                "--max-eval-sentences",
                "8",
                "--vocab-size",
                "400",
                "--num-beams",
                "1",
                "--lr",
                "0.01",
                "--warmup",
                "2",
            )
        )
        == 0
    )
    return out


@pytest.fixture(scope="module")
def server(run_folder, tmp_path_factory):
    # SNAPSHOTS_DIR names the snapshots folder itself; the model served is the run's final checkpoint.
    with running_app(
        tmp_path_factory.mktemp("app") / "app.log",
        MODEL_ID=str(run_folder),
        SNAPSHOTS_DIR=str(run_folder / "snapshots"),
        COPYLAB_TIME_S="4",
    ) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def shown(page) -> dict:
    """What the time-travel view shows now: step, translation and the drawn map's weights."""
    return page.evaluate(
        "() => { const h = window.attentionLens.view('history');"
        " return {step: h.data.snapshots[h.current].step, english: h.english.textContent,"
        " map: Array.from(h.viewer.map.values), done: !!h.data.done, ms: h.lastPickMs}; }"
    )


@needs_corpus
def test_a_checkpoint_without_snapshots_says_so(tmp_path, run_folder):
    empty = tmp_path / "de-en"
    empty.mkdir()
    shown = ui.time_travel.catalog(SnapshotLibrary(empty))
    assert "no training snapshots" in shown["message"] and "snapshots" not in shown
    assert [s.step for s in find_snapshots(run_folder / "snapshots")] == [0, 3, 6]  # the folder itself
    assert [s.step for s in find_snapshots(run_folder)] == [0, 3, 6]  # or the checkpoint that holds it


def test_lab_settings_are_checked_with_clear_errors(monkeypatch):
    assert lab_settings(2, 4, 64.0, 3e-3, 300.0).d_model == 64  # sliders send floats
    for args, message in [
        ((3, 4, 64, 3e-3, 300), "n_layers must be between 1 and 2"),
        ((2, 4, 64, 3e-3, 10_000), "steps must be between 10 and 600"),
        ((2, 4, 64, 1.0, 300), "lr must be between"),
        ((2, 3, 64, 3e-3, 300), "divisible by n_heads"),
        ((2, 4, 64.5, 3e-3, 300), "d_model must be a whole number"),
        ((2, 4, 64, "fast", 300), "learning rate must be a number"),
    ]:
        with pytest.raises(ValueError, match=message):
            lab_settings(*args)
    monkeypatch.setenv("COPYLAB_TIME_S", "60")
    with pytest.raises(ValueError, match="COPYLAB_TIME_S must be .* at most 20"):
        time_limit()


def opened(browser, url: str, selector: str):
    """A desktop-sized page of the app, once `selector` is drawn."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(url + "?open=all")  # every view's section open, as the picture opens one
    page.wait_for_selector(selector, timeout=60_000)
    return page


@browser_test
@needs_corpus
def test_moving_the_slider_changes_translation_and_map_at_once(browser, server):
    page = opened(browser, server, ".al-history .al-h-slider")
    assert page.locator(".al-h-label").text_content().startswith("step 6 (3 of 3)")  # the catalog, before any run
    page.locator("#history-source textarea").fill("Ein Mann fährt Fahrrad.")
    page.locator("#history-go").click()
    page.wait_for_function(
        "() => { const h = window.attentionLens.view('history'); return h.data && h.data.done; }",
        timeout=120_000,
    )
    page.wait_for_function(READY)
    last = shown(page)
    assert last["step"] == 6 and last["english"]
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.locator(".al-h-slider").fill("0")
    first = shown(page)
    assert first["step"] == 0
    assert first["english"] != last["english"] and first["map"] != last["map"]
    assert first["ms"] < 500, first["ms"]  # drawn in the browser: no server round trip
    page.locator(".al-h-chart").first.locator(".al-h-hit").nth(1).click()  # a click on the BLEU curve picks step 3
    assert shown(page)["step"] == 3 and page.locator(".al-h-slider").input_value() == "1"
    assert requests == []
    sharpness = page.evaluate("() => window.attentionLens.view('history').data.snapshots.map(s => s.sharpness)")
    assert len(sharpness) == 3 and all(len(s) == 1 and 0 <= s[0] for s in sharpness)
    data = page.evaluate(
        "() => { const d = window.attentionLens.view('history').data;"
        " return {unfamiliar: d.unfamiliar, reasons: d.reasons}; }"
    )
    notice = page.locator(".al-history .al-h-notice")
    assert notice.is_visible() == bool(data["unfamiliar"] and data["reasons"])  # the trained model's verdict, shown
    page.locator("#history-source textarea").fill("Ich möchte ein Bier.")  # words the run never saw
    page.locator("#history-go").click()
    page.wait_for_function(
        "() => { const h = window.attentionLens.view('history');"
        " return h.data && h.data.done && h.data.text === 'Ich möchte ein Bier.'; }",
        timeout=120_000,
    )
    assert notice.is_visible() and "unlike what this model learned from" in notice.inner_text()
    page.close()


@browser_test
@needs_corpus
def test_the_copy_lab_streams_progress_and_its_loss_falls(browser, server):
    page = opened(browser, server, ".al-copylab")
    start = time.time()
    page.locator("#copylab-train").click()
    page.wait_for_function("() => document.querySelector('.al-copylab').dataset.done === 'true'", timeout=120_000)
    seconds = time.time() - start
    lab = page.evaluate(
        "() => { const l = window.attentionLens.view('copylab');"
        " return {updates: l.updates, losses: l.data.losses, step: l.data.step, elapsed: l.data.elapsed,"
        " rows: document.querySelectorAll('.al-c-examples tr').length}; }"
    )
    assert lab["updates"] >= 2, lab  # streamed, not one answer at the end
    assert lab["elapsed"] <= 4 + 5, lab  # the time limit (COPYLAB_TIME_S=4) holds, a step or report late at most
    losses = [loss for _, loss in lab["losses"]]
    assert losses[-1] < losses[0], losses[:3] + losses[-3:]
    assert lab["rows"] == 5  # the header and four examples
    print(
        f"copy lab: {lab['step']} steps in {lab['elapsed']} s (page {seconds:.1f} s), loss {losses[0]} -> {losses[-1]}"
    )
    page.close()
