"""The static site (python -m ui.export_site) against Python, side by side on this machine, for each weights
precision asked (`--precision fp16 int8`: before and after the int8 weights and their int8 product):

- the median time a sentence takes in the page (Chromium, the WebAssembly SIMD kernel; the translation and its
  maps computed, `attentionLens.compute`, not drawn) against Translator.translate in Python eager (one torch thread, one sentence at a time), greedy and with 4 beams, on the
  same sentences, and how many translations are the same;
- a first visit with nothing cached: the bytes it downloads until its first map is drawn, and the time from
  navigation to that map (the weights loaded);
- the picture's twelve steps opened with the numbers computed in the page;
- the copy lab's default run (2 layers, 4 heads, d_model 64, 300 steps) trained in the page;
- the site's size.

    python bench/site.py [--checkpoint checkpoints/de-en] [--sentences 100] [--visits 3] [--precision fp16 int8]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.page import STEPS, step_report  # noqa: E402
from data import find_corpus  # noqa: E402
from ui.app_process import chromium  # noqa: E402
from ui.export_site import export_site  # noqa: E402

IN_PAGE = """async ([texts, beams]) => { const times = [], out = [];
  for (const t of texts) { const t0 = performance.now();
    out.push((await window.attentionLens.compute(t, {num_beams: beams, max_new_tokens: null, model: 'default'})).translation);
    times.push(performance.now() - t0); }
  return [times, out]; }"""
COPY_LAB = """async () => { const t0 = performance.now();
  const last = await window.attentionLens.copyLab({n_layers: 2, n_heads: 4, d_model: 64, lr: 0.003, steps: 300});
  return [performance.now() - t0, last.step, last.losses[0][1], last.losses[last.losses.length - 1][1], last.accuracy]; }"""


def python_times(checkpoint: str, sentences: list[str], beams: int) -> tuple[list[float], list[str]]:
    import torch

    from translation import Translator

    torch.set_num_threads(1)
    translator = Translator.from_pretrained(checkpoint, device="cpu")
    translator.translate(sentences[:3], num_beams=beams)  # warm
    times, out = [], []
    for text in sentences:
        start = time.perf_counter()
        out.append(translator.translate(text, num_beams=beams))
        times.append((time.perf_counter() - start) * 1000)
    return times, out


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        """A request is not news: nothing is logged."""


def serve(folder: Path) -> str:
    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/"


def first_visits(browser, url: str, visits: int) -> list[tuple[int, int]]:
    """Fresh contexts (nothing cached): (ms from navigation to the first map drawn, bytes downloaded by then)."""
    out = []
    for _ in range(visits):
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page, fetched = context.new_page(), {}
        page.on("requestfinished", lambda r, f=fetched: f.__setitem__(r.url, r.sizes()["responseBodySize"]))
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
        out.append((round((time.perf_counter() - start) * 1000), sum(fetched.values())))
        context.close()
    return out


def page_runs(url: str, sentences: list[str], visits: int, copy_lab: bool) -> dict:
    with chromium() as browser:
        found = {"firsts": first_visits(browser, url, visits)}
        page = browser.new_page()
        page.goto(url)
        page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
        for beams in (1, 4):
            page.evaluate(IN_PAGE, [sentences[:3], beams])  # warm
            found[beams] = page.evaluate(IN_PAGE, [sentences, beams])
        page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 1})", sentences[0])
        found["steps"] = page.evaluate(STEPS)
        found["copy"] = page.evaluate(COPY_LAB) if copy_lab else None
    return found


def report(precision: str, sizes: dict, found: dict, python: dict, n: int) -> None:
    print(
        f"  {precision}: site {sum(sizes.values()) / 2**20:.1f} MB in {len(sizes)} files, weights {sizes['weights.safetensors'] / 2**20:.1f} MB"
    )
    for beams in (1, 4):
        (page_ms, page_out), (python_ms, python_out) = found[beams], python[beams]
        same = sum(a == b for a, b in zip(page_out, python_out))
        ratio = statistics.median(page_ms) / statistics.median(python_ms)
        print(
            f"    {'greedy' if beams == 1 else 'beam 4'}: page {statistics.median(page_ms):.1f} ms, Python eager "
            f"{statistics.median(python_ms):.1f} ms a sentence (median): {ratio:.2f}x; the same translation for {same} of {n}"
        )
    firsts = ", ".join(f"{ms} ms ({b / 2**20:.2f} MB)" for ms, b in found["firsts"])
    print(f"    first visit, nothing cached: navigation -> first map {firsts}")
    print(f"    the picture's twelve steps: {step_report(found['steps'])}")
    if found["copy"]:
        ms, steps, first, last, accuracy = found["copy"]
        print(
            f"    copy lab, 300 steps trained in the page: {ms / 1000:.1f} s, loss {first:.2f} -> {last:.2f}, {accuracy:.0%} copied"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--visits", type=int, default=3)
    parser.add_argument("--precision", nargs="+", default=["fp16", "int8"], choices=["fp32", "fp16", "int8"])
    args = parser.parse_args()
    with gzip.open(find_corpus() / "val.de.gz", "rt", encoding="utf-8") as f:
        sentences = [line.strip() for _, line in zip(range(args.sentences), f)]
    print(f"bench/site.py: {args.checkpoint}, {len(sentences)} val sentences, one at a time, the default model")
    for i, precision in enumerate(args.precision):
        folder = Path(tempfile.mkdtemp(prefix="bench-site-"))
        sizes = export_site(folder, args.checkpoint, precision, snapshots=False)
        found = page_runs(serve(folder), sentences, args.visits, copy_lab=i == len(args.precision) - 1)
        # Python measured right after the page, each time: the machine's load drifts between runs
        python = {beams: python_times(args.checkpoint, sentences, beams) for beams in (1, 4)}
        report(precision, sizes, found, python, len(sentences))


if __name__ == "__main__":
    main()
