"""Latency of the demo: /translate and /explain through gradio_client against a real app.py server,
next to the same calls on Translator in this process, interleaved, on 50 validation sentences.

    python bench/app.py [--checkpoint checkpoints/de-en] [--data-dir ../shared/data/multi30k]
    python bench/app.py --clients 20 [--app-root ../main] [--int8] [--endpoint /explain]

Reports p50 / p95 of each, the server's overhead as a ratio, and the p50 for 13-17-word sentences.
With --clients N: throughput instead, N clients calling /translate (or --endpoint) at once for
--seconds, each on its own val sentences (requests/s, p50/p95 latency); --app-root serves another
checkout's app.py (the code before a change), --int8 sets ATTENTION_LENS_INT8=1, --compile serves
with the native search (its library built before the clients start).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import data  # noqa: E402
from lens.maps import explain  # noqa: E402
from translation import Translator  # noqa: E402
from ui.app_process import launch_app  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_server(checkpoint: str, app_root: Path = ROOT, **env: str) -> tuple[subprocess.Popen, str]:
    """app.py on a free local port with `checkpoint`, started as the tests start it."""
    log = Path(tempfile.mkdtemp(prefix="bench-app-")) / "app.log"
    return launch_app(log, app_root=app_root, MODEL_ID=checkpoint, **env)


def built_library(args) -> str:
    """A compile cache holding the native search's library, which the app loads at start (built here)."""
    cache = tempfile.mkdtemp(prefix="bench-app-compiled-")
    search = Translator.from_pretrained(args.checkpoint, device="cpu").compile(cache_dir=cache)
    if not search.ready:
        raise SystemExit(f"the native search did not build: {search.failure}")
    return cache


def throughput(args, sentences: list[str]) -> None:
    """N clients at once against one server, each calling args.endpoint in a loop for args.seconds."""
    from gradio_client import Client

    env = {"ATTENTION_LENS_INT8": "1"} if args.int8 else {}
    if args.threads:
        env["ATTENTION_LENS_THREADS"] = str(args.threads)
    if args.compile:
        env.update(ATTENTION_LENS_COMPILE="1", ATTENTION_LENS_COMPILE_CACHE=built_library(args))
    proc, url = start_server(args.checkpoint, Path(args.app_root), **env)
    latencies: list[float] = []
    failures: list[str] = []
    try:
        clients = [Client(url, verbose=False) for _ in range(args.clients)]
        options = ("beam search", args.num_beams, 1.0, 128)
        clients[0].predict(sentences[0], *options, api_name=args.endpoint)  # warm-up
        deadline = time.perf_counter() + args.seconds

        def run(i: int) -> None:
            n = i
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                try:
                    clients[i].predict(sentences[n % len(sentences)], *options, api_name=args.endpoint)
                    latencies.append(time.perf_counter() - start)
                except Exception as err:  # noqa: BLE001 - counted and shown, the others go on
                    failures.append(repr(err)[:80])
                n += args.clients

        start = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(run, range(args.clients)))
        elapsed = time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    settings = " ".join(f"{k}={v}" for k, v in env.items()) or "default settings"
    print(
        f"{args.clients} clients calling {args.endpoint}, app.py of {args.app_root} ({settings}), "
        f"beam {args.num_beams}, {os.cpu_count()} CPU cores: {len(latencies) / elapsed:.2f} requests/s, "
        f"p50 {statistics.median(latencies) * 1000:.0f} ms, p95 {percentile(latencies, 0.95) * 1000:.0f} ms "
        f"({len(latencies)} requests in {elapsed:.0f} s, {len(failures)} failed{': ' + failures[0] if failures else ''})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--sentences", type=int, default=50)
    parser.add_argument("--num-beams", type=int, default=4)
    parser.add_argument("--clients", type=int, default=0, help="measure throughput under this many clients at once")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the clients keep calling")
    parser.add_argument("--endpoint", default="/translate", choices=["/translate", "/explain"])
    parser.add_argument("--app-root", default=str(ROOT), help="the checkout whose app.py serves (default: this one)")
    parser.add_argument("--int8", action="store_true", help="serve with ATTENTION_LENS_INT8=1")
    parser.add_argument(
        "--threads", type=int, default=0, help="serve with ATTENTION_LENS_THREADS=N (0: the app's default)"
    )
    parser.add_argument(
        "--compile", action="store_true", help="serve with the native search (ATTENTION_LENS_COMPILE=1), built first"
    )
    args = parser.parse_args()

    val = data.load_split(data.find_corpus(args.data_dir), "val")
    if args.clients:
        throughput(args, val.src[: max(args.sentences, 200)])
        return
    sentences = val.src[: args.sentences]
    translator = Translator.from_pretrained(args.checkpoint)
    proc, url = start_server(args.checkpoint)
    try:
        from gradio_client import Client

        client = Client(url, verbose=False)
        options = ("beam search", args.num_beams, 1.0, 128)
        calls = {
            "Translator.translate": lambda s: translator.translate(s, num_beams=args.num_beams, max_new_tokens=128),
            "/translate": lambda s: client.predict(s, *options, api_name="/translate"),
            "Translator.explain": lambda s: explain(translator, s, num_beams=args.num_beams, max_new_tokens=128),
            "/explain": lambda s: client.predict(s, *options, api_name="/explain"),
        }
        for fn in calls.values():
            fn(sentences[0])  # warm-up
        times = {name: [] for name in calls}
        for sentence in sentences:
            for name, fn in calls.items():
                start = time.perf_counter()
                fn(sentence)
                times[name].append(time.perf_counter() - start)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    print(
        f"{len(sentences)} Multi30k val sentences, beam {args.num_beams}, checkpoint {args.checkpoint}, "
        f"{os.cpu_count()} CPU cores"
    )
    for name, values in times.items():
        print(
            f"   {name:22s} p50 {statistics.median(values) * 1000:7.1f} ms   p95 {percentile(values, 0.95) * 1000:7.1f} ms"
        )
    for api, direct in (("/translate", "Translator.translate"), ("/explain", "Translator.explain")):
        ratio = statistics.median(times[api]) / statistics.median(times[direct])
        print(f"   {api} / {direct}: {ratio:.2f}x at p50")
    mid = [i for i, s in enumerate(sentences) if 13 <= len(s.split()) <= 17]
    if mid:
        p50 = statistics.median(times["/explain"][i] for i in mid)
        print(f"   /explain on the {len(mid)} sentences of 13-17 words: p50 {p50 * 1000:.1f} ms (maps included)")


if __name__ == "__main__":
    main()
