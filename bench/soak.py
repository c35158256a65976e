"""Soak: many mixed page and API requests against a real app.py, its memory and temp disk sampled.

    python bench/soak.py [--checkpoint checkpoints/de-en] [--requests 1000] [--clients 8]

The mix: API /translate and /explain (gradio_client's raw protocol: POST /gradio_api/call, then
its event stream), page translations as a browser sends them (queue/join with a new session each
time, as new visitors do), long page texts near the caps, and refused calls (too long, NaN). Every
`--every` seconds the server's RSS (/proc/<pid>/status) and the size of its GRADIO_TEMP_DIR are
sampled; the report gives start, plateau (median of the last third) and end, and the peak.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.app_server import launch_app  # noqa: E402

SHORT = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im hohen Gras.", "Eine Frau spielt ein Lied auf ihrem Cello.",
         "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.",
         "Ein brauner Hund rennt dem schwarzen Hund hinterher."]
LONG = " ".join(SHORT * 3)  # 15 sentences, ~750 characters: many maps per request
MIX = [("api_translate", 0.35), ("api_explain", 0.2), ("page", 0.3), ("page_long", 0.05), ("refused", 0.1)]


def start_app(checkpoint: str, temp_dir: Path) -> tuple[subprocess.Popen, str]:
    """app.py as a Space runs it (no GRADIO_SERVER_NAME), with Gradio's temp files in `temp_dir`."""
    temp_dir.mkdir(parents=True, exist_ok=True)
    return launch_app(temp_dir.parent / "soak-app.log", listen_local=False, MODEL_ID=checkpoint,
                      GRADIO_TEMP_DIR=str(temp_dir))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6 if folder.exists() else 0.0


def post(url: str, body: dict) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def api_call(url: str, api_name: str, data: list) -> str:
    status, body = post(f"{url}gradio_api/call/{api_name}", {"data": data})
    if status != 200:
        return f"http {status}"
    event_id = json.loads(body)["event_id"]
    with urllib.request.urlopen(f"{url}gradio_api/call/{api_name}/{event_id}", timeout=300) as stream:
        text = stream.read().decode()
    return "ok" if "event: complete" in text else "error"


def page_call(url: str, fn_index: int, trigger_id: int, data: list) -> str:
    """What the browser does for one click: join the queue in a new session, read until completed."""
    session = uuid.uuid4().hex[:11]
    status, _ = post(f"{url}gradio_api/queue/join", {"data": data, "fn_index": fn_index, "session_hash": session,
                                                     "event_data": None, "trigger_id": trigger_id})
    if status != 200:
        return f"http {status}"
    with urllib.request.urlopen(f"{url}gradio_api/queue/data?session_hash={session}", timeout=300) as stream:
        for raw in stream:
            line = raw.decode().strip()
            if line.startswith("data:") and '"process_completed"' in line:
                message = json.loads(line[5:])
                return "ok" if message.get("success") else "error"
    return "no answer"


def page_event(url: str) -> tuple[int, int]:
    """fn_index and trigger id of the page's Translate button, read from the app's config."""
    config = json.loads(urllib.request.urlopen(f"{url}config", timeout=30).read())
    button = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "translate")
    dependency = next(d for d in config["dependencies"] if [button, "click"] in [list(t) for t in d["targets"]])
    return dependency["id"], button


def one_request(url: str, kind: str, page: tuple[int, int], rng: random.Random) -> str:
    try:
        return send(url, kind, page, rng)
    except OSError as err:  # a reset or timeout counts as an outcome, the soak goes on
        return type(err).__name__


def send(url: str, kind: str, page: tuple[int, int], rng: random.Random) -> str:
    text = rng.choice(SHORT)
    if kind == "api_translate":
        return api_call(url, "translate", [text, rng.choice(["greedy", "beam search"]), 4, 1.0, 64])
    if kind == "api_explain":
        return api_call(url, "explain", [text, "beam search", 2, 1.0, 64])
    if kind in ("page", "page_long"):
        return page_call(url, *page, [LONG if kind == "page_long" else text, "beam search", 4, 1.0, 128])
    bad = rng.choice([["Ein Hund. " * 600, "greedy", 1, 1.0, 16], [text, "greedy", 1, float("nan"), 16]])
    return "refused" if api_call(url, "translate", bad) == "error" else "accepted?!"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    temp_dir = Path(tempfile.mkdtemp(prefix="soak-gradio-"))
    proc, url = start_app(args.checkpoint, temp_dir)
    samples: list[tuple[float, float, float]] = []
    done = threading.Event()

    def sample():
        start = time.time()
        while not done.is_set():
            samples.append((time.time() - start, rss_mb(proc.pid), disk_mb(temp_dir)))
            done.wait(args.every)

    try:
        page = page_event(url)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        rng = random.Random(args.seed)
        kinds = rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX], k=args.requests)
        outcomes: dict[str, dict[str, int]] = {}
        start = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            futures = [(kind, pool.submit(one_request, url, kind, page, random.Random(i)))
                       for i, kind in enumerate(kinds)]
            for kind, future in futures:
                outcome = future.result()
                outcomes.setdefault(kind, {}).setdefault(outcome, 0)
                outcomes[kind][outcome] += 1
        seconds = time.perf_counter() - start
        time.sleep(args.every * 2)
        done.set()
        sampler.join()
    finally:
        done.set()
        proc.terminate()
        proc.wait(timeout=30)

    rss = [s[1] for s in samples]
    disk = [s[2] for s in samples]
    plateau = samples[len(samples) * 2 // 3:]
    print(f"{args.requests} requests from {args.clients} clients in {seconds:.0f} s "
          f"({args.requests / seconds:.1f}/s); checkpoint {args.checkpoint}")
    for kind, counts in outcomes.items():
        print(f"  {kind:14s} {counts}")
    print(f"RSS MB:       start {rss[0]:.0f}  plateau {statistics.median(s[1] for s in plateau):.0f}  "
          f"end {rss[-1]:.0f}  peak {max(rss):.0f}   ({len(samples)} samples every {args.every:g} s)")
    print(f"temp disk MB: start {disk[0]:.2f}  plateau {statistics.median(s[2] for s in plateau):.2f}  "
          f"end {disk[-1]:.2f}  peak {max(disk):.2f}")
    quarter = max(1, len(rss) // 4)
    print("RSS by quarter (median MB): " + "  ".join(
        f"{statistics.median(rss[i:i + quarter]):.0f}" for i in range(0, len(rss), quarter)))


if __name__ == "__main__":
    main()
