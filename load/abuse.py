"""Abuse: the requests that cost the most a client may send, against a started app.py, and what they
cost everyone else.

    python load/abuse.py [--checkpoint checkpoints/de-en] [--hog-seconds 45] [--idle-seconds 60]

Scenarios, one after another, each with a victim calling /translate every half second beside it:
- the largest /explain the budget allows (one sentence of 256 byte pieces each way, max_length 256),
  and the over-budget one (16 such lines): answer size, time to refuse;
- the largest head-lab attribution the budget allows (page event, integrated gradients, 32 steps);
- 40 concurrent step-view server calls (component_server, 8 beams, a long sentence);
- one client flooding the largest /explain from 6 threads for 30 s;
- one client resubmitting /trace from 70 threads for --hog-seconds;
then --idle-seconds of nothing. Reported: answer sizes, the server's RSS (start, plateau after a warm
mix, peak per scenario, after idle), the victim's latencies (median, max) and refusals.
Goals (docs/limits.md): no answer over 20 MB, no scenario adds over 500 MB, the victim under 5 s and
never refused, RSS within 150 MB of the plateau after idle.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from load.soak import SHORT, post, rss_mb  # noqa: E402
from ui.app_process import launch_app  # noqa: E402


def odd_text(lines: int, characters: int = 100) -> str:
    rng = random.Random(0)
    return "\n".join(
        "".join(chr(0x4E00 + rng.randrange(20_000)) for _ in range(characters)) + "。" for _ in range(lines)
    )


def call(url: str, api_name: str, data: list, session: str | None = None) -> tuple[str, int, float]:
    """POST /gradio_api/call/<api_name> and read its stream: (outcome, answer bytes, seconds)."""
    start = time.perf_counter()
    body = {"data": data, **({"session_hash": session} if session else {})}
    status, answer = post(f"{url}gradio_api/call/{api_name}", body)
    if status != 200:
        return ("busy" if status == 503 else f"http {status}"), 0, time.perf_counter() - start
    event_id = json.loads(answer)["event_id"]
    import urllib.request

    with urllib.request.urlopen(f"{url}gradio_api/call/{api_name}/{event_id}", timeout=600) as stream:
        text = stream.read()
    outcome = "ok" if b"event: complete" in text else ("busy" if b"busy" in text else "error")
    return outcome, len(text), time.perf_counter() - start


class Watch:
    """While a scenario runs: the server's RSS every 0.2 s, and a victim's /translate every 0.5 s."""

    def __init__(self, url: str, pid: int):
        self.url, self.pid = url, pid
        self.stop = threading.Event()
        self.rss: list[float] = []
        self.latencies: list[float] = []
        self.refused = 0

    def __enter__(self):
        self.threads = [threading.Thread(target=self._sample), threading.Thread(target=self._victim)]
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def _sample(self):
        while not self.stop.is_set():
            self.rss.append(rss_mb(self.pid))
            time.sleep(0.2)

    def _victim(self):
        rng = random.Random(1)
        while not self.stop.is_set():
            outcome, _, seconds = call(self.url, "translate", [rng.choice(SHORT), "beam search", 4, 1.0, 64])
            if outcome == "ok":
                self.latencies.append(seconds)
            else:
                self.refused += 1
            self.stop.wait(0.5)

    def report(self, before: float) -> dict:
        lat = self.latencies or [float("nan")]
        return {
            "rss_peak_mb": round(max(self.rss, default=before)),
            "rss_added_mb": round(max(self.rss, default=before) - before),
            "victim_calls": len(self.latencies),
            "victim_median_s": round(statistics.median(lat), 2),
            "victim_max_s": round(max(lat), 2),
            "victim_refused": self.refused,
        }


def page_join(url: str, fn_index: int, data: list) -> tuple[str, int, float]:
    """A page event as the browser sends it: queue/join in a new session, read until completed."""
    import urllib.request

    start, session = time.perf_counter(), uuid.uuid4().hex[:11]
    status, _ = post(f"{url}gradio_api/queue/join", {"data": data, "fn_index": fn_index, "session_hash": session})
    if status != 200:
        return f"http {status}", 0, time.perf_counter() - start
    size = 0
    with urllib.request.urlopen(f"{url}gradio_api/queue/data?session_hash={session}", timeout=600) as stream:
        for raw in stream:
            size += len(raw)
            if b'"process_completed"' in raw:
                outcome = "error" if b'"error"' in raw and b'"error":null' not in raw else "ok"
                return outcome, size, time.perf_counter() - start
    return "no answer", size, time.perf_counter() - start


def ids(url: str) -> dict:
    """The component id of the step view and the fn_index of the head lab's attribution, from /config."""
    import urllib.request

    config = json.loads(urllib.request.urlopen(f"{url}config", timeout=30).read())
    elem = {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}
    button = next(i for i, e in elem.items() if e == "headlab-attribute")
    attribution = next(d["id"] for d in config["dependencies"] if [button, "click"] in [list(t) for t in d["targets"]])
    return {"step": next(i for i, e in elem.items() if e == "step-result"), "attribution": attribution}


def scenarios(url: str, where: dict) -> dict:
    """name -> a function running it and returning what it measured."""
    long_sentence = "Ein Hund läuft über eine grüne Wiese und " * 8

    def largest_explain():
        outcome, size, seconds = call(url, "explain", [odd_text(1), "beam search", 4, 1.0, 256])
        refused, _, refuse_s = call(url, "explain", [odd_text(16), "beam search", 4, 1.0, 256])
        return {
            "outcome": outcome,
            "answer_mb": round(size / 1e6, 2),
            "seconds": round(seconds, 1),
            "over_budget": refused,
            "refused_in_s": round(refuse_s, 2),
        }

    def largest_attribution():
        text = "Ein Hund läuft über eine grüne Wiese und " * 5 + "bellt."  # near the work budget
        outcome, size, seconds = page_join(url, where["attribution"], [text, "integrated gradients (32 steps)"])
        over, _, over_s = page_join(url, where["attribution"], [long_sentence, "integrated gradients (32 steps)"])
        return {
            "outcome": outcome,
            "answer_mb": round(size / 1e6, 3),
            "seconds": round(seconds, 1),
            "over_budget": over,
            "refused_in_s": round(over_s, 2),
        }

    def component_flood():
        def force(_):
            body = {
                "session_hash": uuid.uuid4().hex[:11],
                "component_id": where["step"],
                "fn_name": "force",
                "data": {"text": long_sentence, "num_beams": 8, "ids": [5, 9]},
            }
            status, answer = post(f"{url}gradio_api/component_server", body)
            return "busy" if b"busy" in answer else ("ok" if status == 200 and b'"trace"' in answer else "error")

        with ThreadPoolExecutor(40) as pool:
            outcomes = list(pool.map(force, range(40)))
        return {name: outcomes.count(name) for name in sorted(set(outcomes))}

    def explain_flood(seconds: float = 30, threads: int = 6):
        """One client asking for the largest /explain from `threads` threads at once, again and again."""
        end, outcomes = time.perf_counter() + seconds, []

        def loop():
            while time.perf_counter() < end:
                outcomes.append(call(url, "explain", [odd_text(1), "beam search", 4, 1.0, 256])[0])

        workers = [threading.Thread(target=loop) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return {name: outcomes.count(name) for name in sorted(set(outcomes))}

    return {
        "largest_explain": largest_explain,
        "largest_attribution": largest_attribution,
        "component_flood": component_flood,
        "explain_flood": explain_flood,
        **inside_scenarios(url),
    }


def first_answered(url: str, api_name: str, tries: list[list]) -> dict:
    """Call `api_name` with each argument list in turn until one is answered: the worst case the budget lets in
    (the tries go from the most to the least costly), with how many before it were refused and how fast."""
    refused = []
    for data in tries:
        outcome, size, seconds = call(url, api_name, data)
        if outcome == "ok":
            return {
                "outcome": outcome,
                "answer_kb": round(size / 1e3, 1),
                "seconds": round(seconds, 1),
                "refused_before": len(refused),
                "slowest_refusal_s": round(max(refused, default=0.0), 2),
            }
        refused.append(seconds)
    return {"outcome": "all refused", "refused_before": len(refused), "slowest_refusal_s": round(max(refused), 2)}


def cjk_pair(shift: int, characters: int = 100) -> tuple[str, str]:
    """One line of CJK characters (100 make 256 byte pieces) and the same with its first characters changed."""
    clean = odd_text(1, characters)
    return clean, "".join(chr(ord(ch) + shift) for ch in clean[:3]) + clean[3:]


def inside_scenarios(url: str) -> dict:
    """The inside views at their worst: the longest /patch and /contrast the work budgets allow, and three
    /patch calls at once."""
    greedy = ["greedy", 1, 1.0, 256]

    def largest_patch():
        return first_answered(
            url,
            "patch",
            [
                [*cjk_pair(shift, characters), step, *greedy]
                for characters, step in ((100, 256), (100, 0), (80, 0), (70, 0), (60, 0))
                for shift in (1, 2, 5, 11)
            ],
        )

    def largest_contrast():
        return first_answered(
            url,
            "contrast",
            [
                [odd_text(1, characters), step, "cat", *greedy]
                for characters in (100, 60)
                for step in (256, 160, 120, 80, 40, 1)
            ],
        )

    def three_patches():
        with ThreadPoolExecutor(3) as pool:
            return {"answers": list(pool.map(lambda shift: largest_patch_once(url, shift), (1, 2, 11)))}

    return {"largest_patch": largest_patch, "largest_contrast": largest_contrast, "three_patches": three_patches}


def largest_patch_once(url: str, shift: int) -> str:
    outcome, _, seconds = call(url, "patch", [*cjk_pair(shift, 60), 0, "greedy", 1, 1.0, 256])
    return f"{outcome} in {seconds:.1f} s"


def hog(url: str, seconds: float, threads: int = 70) -> dict:
    """One client (one address; a new session per call, as raw HTTP sends) resubmitting /trace from
    `threads` threads for `seconds`. (Calls sharing one session would read each other's stream.)"""
    deadline, outcomes = time.time() + seconds, []

    def loop():
        while time.time() < deadline:
            outcomes.append(call(url, "trace", [SHORT[3], "beam search", 4, 1.0, 64, 10, ""])[0])

    pool = [threading.Thread(target=loop) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return {name: outcomes.count(name) for name in sorted(set(outcomes))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--hog-seconds", type=float, default=45)
    parser.add_argument("--idle-seconds", type=float, default=60)
    parser.add_argument("--log", default="/tmp/abuse-app.log")
    parser.add_argument(
        "--only",
        nargs="*",
        help="run only these scenarios (e.g. largest_patch largest_contrast three_patches), and no hog",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="run each scenario this many times (the victim's max is reported for each run)",
    )
    args = parser.parse_args()
    proc, url = launch_app(Path(args.log), listen_local=False, MODEL_ID=args.checkpoint, EVERYDAY_MODEL_ID="none")
    try:
        report = {"rss_start_mb": round(rss_mb(proc.pid))}
        for text in SHORT * 4:  # a warm mix, then the plateau
            call(url, "translate", [text, "beam search", 4, 1.0, 64])
            call(url, "explain", [text, "beam search", 4, 1.0, 64])
        time.sleep(12)  # one sweep
        report["rss_plateau_mb"] = plateau = round(rss_mb(proc.pid))
        where = ids(url)
        for name, run in scenarios(url, where).items():
            if args.only and name not in args.only:
                continue
            for repeat in range(args.repeats):
                with Watch(url, proc.pid) as watch:
                    measured = run()
                key = name if args.repeats == 1 else f"{name} #{repeat + 1}"
                report[key] = {**measured, **watch.report(plateau)}
                print(key, report[key], flush=True)
        if args.only:
            print(json.dumps(report, indent=1))
            return
        with Watch(url, proc.pid) as watch:
            measured = hog(url, args.hog_seconds)
        report["trace_hog"] = {**measured, **watch.report(plateau)}
        print("trace_hog", report["trace_hog"], flush=True)
        time.sleep(args.idle_seconds)
        report["rss_after_idle_mb"] = round(rss_mb(proc.pid))
        report["rss_after_idle_over_plateau_mb"] = report["rss_after_idle_mb"] - plateau
        print(json.dumps(report, indent=1))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
