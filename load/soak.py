"""Soak: many mixed page, API and MCP requests against a real app.py, its memory and temp disk sampled.

    python load/soak.py [--checkpoint checkpoints/de-en] [--minutes 10] [--clients 8]
    python load/soak.py --requests 1000                      # a fixed number of requests instead

The mix: API /translate and /explain (gradio_client's raw protocol: POST /gradio_api/call, then
its event stream), every inside endpoint (/trace, /ablate, /qkv, /logit_lens, /contributions,
/contrast, /patch), page translations as a browser sends them (queue/join with a new session each
time, as new visitors do), long page texts near the caps, MCP tool calls (a new MCP client each), and
15% bad calls (too long, NaN, ±inf, a wrong type, a missing or extra value, a bidi override). A victim
calls /translate every second beside it. Every `--every` seconds the server's RSS (/proc/<pid>/status) and
the size of its GRADIO_TEMP_DIR are sampled; the report gives start, plateau (median of the last third)
and end, and the peak; the outcomes of each kind (HTTP 500s and answers without a message counted apart);
and the victim's latency percentiles.
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
from ui.app_process import launch_app  # noqa: E402

SHORT = [
    "Ein Mann fährt Fahrrad.",
    "Zwei Hunde spielen im hohen Gras.",
    "Eine Frau spielt ein Lied auf ihrem Cello.",
    "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.",
    "Ein brauner Hund rennt dem schwarzen Hund hinterher.",
]
LONG = " ".join(SHORT * 3)  # 15 sentences, ~750 characters: many maps per request
MIX = [
    ("api_translate", 0.2),
    ("api_explain", 0.12),
    ("inside", 0.2),
    ("page", 0.2),
    ("page_long", 0.03),
    ("mcp", 0.1),
    ("refused", 0.15),
]
INSIDE = [
    ("trace", [SHORT[0], "beam search", 4, 1.0, 64, 10, ""]),
    ("ablate", [SHORT[1], '["cross:2:1"]', "greedy", 1, 1.0, 64]),
    ("qkv", [SHORT[2], "cross", 1, 1, 1, "greedy", 1, 1.0, 64]),
    ("logit_lens", [SHORT[3], "greedy", 1, 1.0, 64, ""]),
    ("contributions", [SHORT[4], "greedy", 1, 1.0, 64, ""]),
    ("contrast", [SHORT[0], 2, "woman", "greedy", 1, 1.0, 64]),
    ("patch", [SHORT[0], "Ein Mann fährt Auto.", 0, "greedy", 1, 1.0, 64]),
]
BAD = [
    ("translate", ["Ein Hund. " * 600, "greedy", 1, 1.0, 16]),
    ("translate", [SHORT[0], "greedy", 1, float("nan"), 16]),
    ("qkv", [SHORT[0], "cross", float("inf"), 1, 1, "greedy", 1, 1.0, 64]),
    ("contrast", [SHORT[0], float("-inf"), "a"]),
    ("translate", [42]),
    ("translate", [SHORT[0], "greedy", 1, 1.0, 16, "", "extra"]),
    ("translate", [SHORT[0], "greedy", 1, 1.0, 16, "A \u202eman"]),
    ("patch", [SHORT[0], SHORT[1], 0]),
]


def start_app(checkpoint: str, temp_dir: Path) -> tuple[subprocess.Popen, str]:
    """app.py as a Space runs it (no GRADIO_SERVER_NAME), with Gradio's temp files in `temp_dir`."""
    temp_dir.mkdir(parents=True, exist_ok=True)
    return launch_app(
        temp_dir.parent / "soak-app.log", listen_local=False, MODEL_ID=checkpoint, GRADIO_TEMP_DIR=str(temp_dir)
    )


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
    """ok, error (with a message), messageless (an error without one), busy, or http <status>."""
    request = urllib.request.Request(
        f"{url}gradio_api/call/{api_name}",
        headers={"Content-Type": "application/json"},
        data=json.dumps({"data": data}, allow_nan=True).encode(),
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as err:
        status, body = err.code, err.read()
    if status != 200:
        return f"http {status}"
    event_id = json.loads(body)["event_id"]
    with urllib.request.urlopen(f"{url}gradio_api/call/{api_name}/{event_id}", timeout=300) as stream:
        text = stream.read().decode()
    if "event: complete" in text:
        return "ok"
    message = text.split("event: error\ndata: ", 1)[-1].strip()
    if message in ("", "null") or '"error": null' in message:
        return "messageless"
    return "busy" if "busy" in message else "error"


def mcp_call(url: str, tool: str, arguments: dict) -> str:
    """One tool call from a new MCP client over streamable HTTP: ok, error (with a message) or messageless."""
    import asyncio

    from mcp import ClientSession
    from mcp.client import streamable_http

    connect = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client

    async def main():
        async with connect(url + "gradio_api/mcp/") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool(tool, arguments)

    result = asyncio.run(main())
    text = result.content[0].text if result.content else ""
    return ("messageless" if not text.strip() else "busy" if "busy" in text else "error") if result.isError else "ok"


def page_call(url: str, fn_index: int, trigger_id: int, data: list) -> str:
    """What the browser does for one click: join the queue in a new session, read until completed."""
    session = uuid.uuid4().hex[:11]
    status, _ = post(
        f"{url}gradio_api/queue/join",
        {"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": trigger_id},
    )
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
    if kind == "inside":
        name, data = rng.choice(INSIDE)
        return api_call(url, name, data)
    if kind in ("page", "page_long"):
        return page_call(url, *page, [LONG if kind == "page_long" else text, "beam search", 4, 1.0, 128])
    if kind == "mcp":
        tool, arguments = rng.choice(
            [
                ("translate", {"text": text}),
                ("logit_lens", {"text": text, "decoding": "greedy"}),
                ("trace", {"text": text, "decoding": "greedy"}),
            ]
        )
        return mcp_call(url, tool, arguments)
    outcome = api_call(url, *rng.choice(BAD))
    return "refused" if outcome == "error" else outcome if outcome in ("messageless", "busy") else "accepted?!"


class Victim:
    """A visitor calling /translate every second while the soak runs: its latencies and refusals."""

    def __init__(self, url: str):
        self.url, self.stop, self.latencies, self.refused = url, threading.Event(), [], 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            start = time.perf_counter()
            outcome = one_request(self.url, "api_translate", (0, 0), random.Random(len(self.latencies)))
            if outcome == "ok":
                self.latencies.append(time.perf_counter() - start)
            else:
                self.refused += 1
            self.stop.wait(1.0)

    def report(self) -> str:
        lat = sorted(self.latencies) or [float("nan")]
        pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]  # noqa: E731
        return (
            f"victim /translate: {len(self.latencies)} answered, {self.refused} refused; p50 {pick(0.5):.2f} s  "
            f"p95 {pick(0.95):.2f} s  p99 {pick(0.99):.2f} s  max {lat[-1]:.2f} s"
        )


def run_mix(url: str, page: tuple[int, int], args) -> dict[str, dict[str, int]]:
    """--clients threads sending the mix, for --minutes (or --requests in all): {kind: {outcome: count}}."""
    deadline = time.time() + 60 * args.minutes
    left = [args.requests] if args.requests else None
    outcomes: dict[str, dict[str, int]] = {}
    lock = threading.Lock()

    def client(number: int):
        rng = random.Random(args.seed * 1000 + number)
        while left is not None or time.time() < deadline:
            with lock:
                if left is not None:
                    if left[0] <= 0:
                        return
                    left[0] -= 1
            kind = rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX])[0]
            outcome = one_request(url, kind, page, rng)
            with lock:
                outcomes.setdefault(kind, {}).setdefault(outcome, 0)
                outcomes[kind][outcome] += 1

    with ThreadPoolExecutor(args.clients) as pool:
        list(pool.map(client, range(args.clients)))
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--minutes", type=float, default=10.0, help="how long the mix runs")
    parser.add_argument("--requests", type=int, help="a fixed number of requests instead of --minutes")
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
        victim = Victim(url)
        victim.thread.start()
        start = time.perf_counter()
        outcomes = run_mix(url, page, args)
        victim.stop.set()
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
    plateau = samples[len(samples) * 2 // 3 :]
    total = sum(sum(counts.values()) for counts in outcomes.values())
    print(
        f"{total} requests from {args.clients} clients in {seconds:.0f} s ({total / seconds:.1f}/s); "
        f"checkpoint {args.checkpoint}"
    )
    for kind, counts in sorted(outcomes.items()):
        print(f"  {kind:14s} {counts}")
    every = [o for counts in outcomes.values() for o, n in counts.items() for _ in range(n)]
    print(
        f"HTTP 500: {every.count('http 500')}   messageless: {every.count('messageless')}   "
        f"accepted bad calls: {every.count('accepted?!')}"
    )
    print(victim.report())
    print(
        f"RSS MB:       start {rss[0]:.0f}  plateau {statistics.median(s[1] for s in plateau):.0f}  "
        f"end {rss[-1]:.0f}  peak {max(rss):.0f}   ({len(samples)} samples every {args.every:g} s)"
    )
    print(
        f"temp disk MB: start {disk[0]:.2f}  plateau {statistics.median(s[2] for s in plateau):.2f}  "
        f"end {disk[-1]:.2f}  peak {max(disk):.2f}"
    )
    quarter = max(1, len(rss) // 4)
    print(
        "RSS by quarter (median MB): "
        + "  ".join(f"{statistics.median(rss[i : i + quarter]):.0f}" for i in range(0, len(rss), quarter))
    )


if __name__ == "__main__":
    main()
