"""The lab (ui/static/lab.js) in Chromium on this machine, side by side in one run:

- each experiment's default pair (A and B, their default size) trained the lab's way, in two workers at once, against
  the same two runs one after the other in the page itself (what a lab without workers would do): the wall time of
  each and the ratio, and how late the page answered a 20 ms timer while the workers trained;
- the copy lab's default run (2 layers, 4 heads, d_model 64, 300 steps) in the page (ui/static/copytrain.js) against
  the server's (training/lab.py, PyTorch on the cores torch is given), as milliseconds per thousand pieces trained.

    python bench/lab.py [--only scale causal-mask] [--steps N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.site import serve  # noqa: E402
from training.lab import CopyLabSettings, train_copy  # noqa: E402
from ui.app_process import chromium  # noqa: E402

PAGE = """<!doctype html><meta charset="utf-8"><script type="module">
import * as lab from "./static/lab.js"; import * as trainer from "./static/trainer.js"; import * as copy from "./static/copytrain.js";
window.bench = { lab, trainer, copy };
</script>"""
BOTH = """async ([id, steps]) => {
  const { lab, trainer } = window.bench, table = await lab.experimentTable(), e = table[id];
  const overrides = steps ? { steps } : {}, pair = e.pairs[0].id;
  let late = 0, ticking = true;
  const tick = (async () => { while (ticking) { const t0 = performance.now(); await new Promise((r) => setTimeout(r, 20));
    late = Math.max(late, performance.now() - t0 - 20); } })();
  let t0 = performance.now();
  const r = await lab.runPair(e, pair, overrides, () => {});
  const workers = performance.now() - t0;
  ticking = false; await tick;
  const { a, b } = lab.pairSettings(e, pair, overrides);
  t0 = performance.now();
  await trainer.train(a, () => {}); await trainer.train(b, () => {});
  const inPage = performance.now() - t0;
  return { workers, inPage, late, steps: a.steps, holds: lab.better(lab.expected(e, pair).metric,
    lab.finalOf(r.a)[lab.expected(e, pair).metric], lab.finalOf(r.b)[lab.expected(e, pair).metric]) === lab.expected(e, pair).better };
}"""
COPY = """async () => { const t0 = performance.now();
  const last = await window.bench.copy.trainCopy({n_layers: 2, n_heads: 4, d_model: 64, lr: 0.003, steps: 300}, () => {});
  return [performance.now() - t0, last.step]; }"""
PIECES_PER_STEP = {"page": 18 * 14, "server": 512}  # at most: 18 sequences of up to 14 pieces; 512 pieces a batch


def page_runs(only: list[str], steps: int | None) -> tuple[dict, list]:
    folder = Path(tempfile.mkdtemp(prefix="lab-bench-"))
    shutil.copytree(ROOT / "ui" / "static", folder / "static")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    url = serve(folder)
    with chromium() as browser:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_function("() => window.bench", timeout=60_000)
        names = only or list(json.loads((ROOT / "ui" / "static" / "experiments.json").read_text()))
        found = {name: page.evaluate(BOTH, [name, steps]) for name in names}
        copy = page.evaluate(COPY)
    shutil.rmtree(folder, ignore_errors=True)
    return found, copy


def server_copy() -> tuple[float, int]:
    start = time.perf_counter()
    progress = train_copy(CopyLabSettings(n_layers=2, n_heads=4, d_model=64, lr=3e-3, steps=300), time_limit_s=20.0)
    return (time.perf_counter() - start) * 1000, progress.step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=[], help="these experiments (default: all)")
    parser.add_argument("--steps", type=int, default=None, help="steps of each run (default: each experiment's)")
    args = parser.parse_args()
    found, (copy_ms, copy_steps) = page_runs(args.only, args.steps)
    server_ms, server_steps = server_copy()
    print(f"{'experiment':24} {'steps':>5} {'2 workers':>10} {'in turn':>9} {'ratio':>6} {'timer late':>10}  as said")
    for name, r in found.items():
        print(f"{name:24} {r['steps']:>5} {r['workers'] / 1000:9.1f}s {r['inPage'] / 1000:8.1f}s "
              f"{r['inPage'] / r['workers']:5.2f}x {r['late']:8.0f}ms  {'yes' if r['holds'] else 'NO'}")  # fmt: skip
    ratios = [r["inPage"] / r["workers"] for r in found.values()]
    print(
        f"median ratio (in turn / two workers): {statistics.median(ratios):.2f}x; "
        f"slowest pair in workers: {max(r['workers'] for r in found.values()) / 1000:.1f} s"
    )
    page_rate = copy_ms / (copy_steps * PIECES_PER_STEP["page"]) * 1000
    server_rate = server_ms / (server_steps * PIECES_PER_STEP["server"]) * 1000
    print(f"copy lab, ms per 1,000 pieces (at most): page {page_rate:.0f} ({copy_steps} steps in {copy_ms / 1000:.1f} s), "
          f"server {server_rate:.0f} ({server_steps} steps in {server_ms / 1000:.1f} s): "
          f"the server is {page_rate / server_rate:.1f}x the page's speed")  # fmt: skip


if __name__ == "__main__":
    main()
