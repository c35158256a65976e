"""Start-up of app.py with the compiled decoder step on: what a visitor meets while the step is built.

    python bench/app_start.py [--checkpoint checkpoints/de-en] [--seconds 120] [--every 2]

Starts a real app.py server twice with ATTENTION_LENS_COMPILE=1: first with an empty compile cache (a
child process builds the package while the app serves), then with the package that run left. For
each: seconds from launch to the first /translate answered, and the latency of a /translate of one
sentence every --every seconds for --seconds (through gradio_client): median and worst while the
package was being built, and median after it was in the cache. The build's end is when the package
file appears in the cache folder.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ui.app_process import launch_app  # noqa: E402

SENTENCE = "Ein Mann fährt Fahrrad."


def one_start(checkpoint: str, cache: Path, seconds: float, every: float) -> dict:
    """Launch, then call /translate on a clock; (seconds since launch, latency) of each call."""
    from gradio_client import Client

    launched = time.perf_counter()
    proc, url = launch_app(
        Path(tempfile.mkdtemp(prefix="bench-start-")) / "app.log",
        MODEL_ID=checkpoint,
        ATTENTION_LENS_COMPILE="1",
        ATTENTION_LENS_COMPILE_CACHE=str(cache),
    )
    calls, built_at = [], None
    try:
        client = Client(url, verbose=False)
        while time.perf_counter() - launched < seconds:
            start = time.perf_counter()
            client.predict(SENTENCE, "beam search", 4, 1.0, 30, api_name="/translate")
            calls.append((start - launched, time.perf_counter() - start))
            if built_at is None and list(cache.glob("step-*.pt2")):
                built_at = time.perf_counter() - launched
            time.sleep(max(0.0, every - (time.perf_counter() - start)))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {"first": calls[0][0] + calls[0][1], "calls": calls, "built_at": built_at}


def report(name: str, run: dict, cold: bool) -> None:
    built = run["built_at"] if cold and run["built_at"] is not None else (float("inf") if cold else 0.0)
    during = [latency for at, latency in run["calls"] if at < built]
    after = [latency for at, latency in run["calls"] if at >= built + (5 if cold else 0)]  # loaded just after it
    line = f"{name}: first /translate answered {run['first']:.1f} s after launch"
    if cold and run["built_at"] is not None:
        line += f"; package built {run['built_at']:.0f} s after launch"
    if during:
        line += (
            f"; while it was built: {len(during)} calls, median {statistics.median(during) * 1000:.0f} ms, "
            f"worst {max(during) * 1000:.0f} ms"
        )
    if after:
        line += f"; {'after' if cold else 'all'}: {len(after)} calls, median {statistics.median(after) * 1000:.0f} ms"
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--every", type=float, default=2.0)
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="compile-cache-"))
    print(
        f"app.py with ATTENTION_LENS_COMPILE=1, a beam-4 /translate of {SENTENCE!r} every {args.every:g} s:", flush=True
    )
    report("empty compile cache", one_start(args.checkpoint, cache, args.seconds, args.every), cold=True)
    report("package in the cache", one_start(args.checkpoint, cache, min(args.seconds, 30), args.every), cold=False)


if __name__ == "__main__":
    main()
