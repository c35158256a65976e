"""The requests that once cost far more than they should, against app.py with the shipped checkpoint
(max_len 256, so the largest answers are reachable): each is refused in words, before the work, or
served within bounds, and the server keeps serving others."""

import json
import random
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.test_public import post, raw_call, result_of
from ui.app_process import launch_app

pytestmark = [pytest.mark.server, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "de-en"
SENTENCE = "Ein Mann fährt Fahrrad."


def odd_text(lines: int = 16, characters: int = 100, seed: int = 0) -> str:
    """16 lines of 100 CJK characters: each line a sentence of 256 byte pieces, inside every text cap."""
    rng = random.Random(seed)
    return "\n".join(
        "".join(chr(0x4E00 + rng.randrange(20_000)) for _ in range(characters)) + "。" for _ in range(lines)
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not (CHECKPOINT / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint is not in checkpoints/de-en")
    proc, url = launch_app(tmp_path_factory.mktemp("abuse") / "app.log", MODEL_ID=str(CHECKPOINT))
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_the_largest_explain_is_refused_before_any_work_and_says_what_to_shorten(server):
    begun = time.perf_counter()
    stream = raw_call(server, "explain", [odd_text(), "beam search", 4, 1.0, 256])
    assert "event: error" in stream and "million attention weights" in stream, stream[:500]
    assert "send fewer or shorter sentences" in stream and time.perf_counter() - begun < 5
    ordinary = result_of(raw_call(server, "explain", [SENTENCE, "greedy", 1, 1.0, 40]))
    assert ordinary["translation"] and len(json.dumps(ordinary)) < 200_000


def test_one_long_odd_sentence_fits_the_budget_and_its_answer_is_compact(server):
    stream = raw_call(server, "explain", [odd_text(lines=1), "greedy", 1, 1.0, 256])
    answer = result_of(stream)
    assert len(answer["sentences"]) == 1 and len(stream) < 20_000_000


def test_the_run_route_does_not_skip_the_queue(server):
    status, body = post(f"{server}gradio_api/run/translate", {"data": [SENTENCE]})
    assert status != 200 and "queue" in body.lower(), (status, body[:300])


def step_component_id(server: str) -> int:
    with urllib.request.urlopen(f"{server}config", timeout=30) as response:
        config = json.load(response)
    return next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "step-result")


def test_step_view_server_functions_run_in_a_bounded_lane(server):
    from ui.lanes import SIDE_SLOTS, SIDE_WAITING

    component = step_component_id(server)
    answers = []

    def force():
        body = {
            "session_hash": f"s{threading.get_ident()}",
            "component_id": component,
            "fn_name": "force",
            "data": {"text": "Ein Hund läuft über eine grüne Wiese und " * 8, "num_beams": 8, "ids": [5, 9]},
        }
        answers.append(post(f"{server}gradio_api/component_server", body))

    threads = [threading.Thread(target=force) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = {status for status, _ in answers}
    bodies = [json.loads(body) for _, body in answers]
    busy = [b for b in bodies if "busy" in str(b.get("error", ""))]
    served = [b for b in bodies if "trace" in b]
    assert statuses == {200} and len(busy) >= 12 - (SIDE_SLOTS + SIDE_WAITING) and served, bodies[:2]
    assert all("try again in a moment" in b["error"] for b in busy)
