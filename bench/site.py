"""The static site (python -m ui.export_site) against Python, side by side on this machine: the median time a
greedy sentence takes in the page (Chromium, the WebAssembly SIMD kernel) against Translator.translate(...,
num_beams=1) in Python eager (one torch thread, one sentence at a time), the same sentences; the first
translation's map after navigation, loading the weights included; the picture's twelve steps opened with the
numbers computed in the page; and the site's size.

    python bench/site.py [--checkpoint checkpoints/de-en] [--sentences 100] [--visits 3]
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

IN_PAGE = """async (texts) => { const times = [], out = [];
  for (const t of texts) { const t0 = performance.now();
    out.push((await window.attentionLens.translate(t, {num_beams: 1, max_new_tokens: null})).translation);
    times.push(performance.now() - t0); }
  return [times, out]; }"""


def python_times(checkpoint: str, sentences: list[str]) -> tuple[list[float], list[str]]:
    import torch

    from translation import Translator

    torch.set_num_threads(1)
    translator = Translator.from_pretrained(checkpoint, device="cpu")
    translator.translate(sentences[:3], num_beams=1)  # warm
    times, out = [], []
    for text in sentences:
        start = time.perf_counter()
        out.append(translator.translate(text, num_beams=1))
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


def page_runs(
    url: str, sentences: list[str], visits: int
) -> tuple[list[float], list[str], list[tuple[int, int]], dict]:
    """Fresh contexts (nothing cached): navigation -> model loaded and first map drawn; then the sentences."""
    firsts = []
    with chromium() as browser:
        for _ in range(visits):
            context = browser.new_context(viewport={"width": 1366, "height": 768})
            page = context.new_page()
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
            firsts.append(
                (round((time.perf_counter() - start) * 1000), page.evaluate("() => window.attentionLens.firstMs"))
            )
            context.close()
        page = browser.new_page()
        page.goto(url)
        page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
        page.evaluate(IN_PAGE, sentences[:3])  # warm
        times, out = page.evaluate(IN_PAGE, sentences)
        page.evaluate("(t) => window.attentionLens.translate(t, {num_beams: 1})", sentences[0])
        steps = page.evaluate(STEPS)
    return times, out, firsts, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--visits", type=int, default=3)
    args = parser.parse_args()
    with gzip.open(find_corpus() / "val.de.gz", "rt", encoding="utf-8") as f:
        sentences = [line.strip() for _, line in zip(range(args.sentences), f)]
    folder = Path(tempfile.mkdtemp(prefix="bench-site-"))
    sizes = export_site(folder, args.checkpoint)
    page_ms, page_out, firsts, steps = page_runs(serve(folder), sentences, args.visits)
    python_ms, python_out = python_times(args.checkpoint, sentences)
    same = sum(a == b for a, b in zip(page_out, python_out))
    ratio = statistics.median(page_ms) / statistics.median(python_ms)
    print(f"bench/site.py: {args.checkpoint}, {len(sentences)} val sentences, greedy, one at a time")
    print(
        f"  site: {sum(sizes.values()) / 2**20:.1f} MB in {len(sizes)} files (weights {sizes['weights.safetensors'] / 2**20:.1f} MB)"
    )
    print(
        f"  median per sentence: page {statistics.median(page_ms):.1f} ms, Python eager {statistics.median(python_ms):.1f} ms: "
        f"{ratio:.2f}x; the same translation for {same} of {len(sentences)}"
    )
    print(
        f"  navigation -> first map drawn (weights loaded, fresh context): "
        f"{', '.join(f'{a} ms (in-page clock {b} ms)' for a, b in firsts)}"
    )
    print(f"  the picture's twelve steps, computed in the page: {step_report(steps)}")


if __name__ == "__main__":
    main()
