"""ui/lanes.py: caps on what one client may have waiting, places kept for /translate, and the bounded
lane of the step view's server functions. On a tiny Blocks served by Gradio, driven over raw HTTP."""

import json
import threading
import time
import urllib.error
import urllib.request

import pytest

from ui import lanes
from ui.app_process import free_port

pytestmark = [pytest.mark.server]


def post(url: str, body: dict, headers: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.fixture(scope="module")
def tiny_app():
    import gradio as gr

    from ui import public

    release = threading.Event()
    with gr.Blocks() as demo:

        def heavy(x: str = "") -> str:
            """Wait until the test lets it go."""
            release.wait(30)
            return "heavy " + x

        def translate(x: str = "") -> str:
            """Answer at once."""
            return "cheap " + x

        def page(x: str = "") -> str:
            """The page's own translate view, in a lane of its own."""
            return "page " + x

        gr.api(heavy, api_name="trace")
        gr.api(translate, api_name="translate")
        gr.api(page, api_name="page_translate", concurrency_id="page-explain")
    demo.queue(default_concurrency_limit=1, max_size=8)
    public.friendly_queue_full(demo)
    lanes.share_queue(demo)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_port=free_port(), quiet=True)
    yield demo, url, release
    demo.close()


def join(url: str, demo, api_name: str, session: str, address: str = "") -> tuple[int, str]:
    fn_index = next(i for i, fn in demo.fns.items() if fn.api_name == api_name)
    headers = {"X-Forwarded-For": address} if address else {}
    return post(f"{url}gradio_api/queue/join", {"data": ["x"], "fn_index": fn_index, "session_hash": session}, headers)


def wait_until(condition, seconds: float = 20) -> None:
    deadline = time.time() + seconds
    while not condition() and time.time() < deadline:
        time.sleep(0.05)


def test_one_client_cannot_fill_the_queue_and_translate_keeps_room(tiny_app, monkeypatch):
    demo, url, release = tiny_app
    monkeypatch.setattr(lanes, "PER_SESSION", 2)
    monkeypatch.setattr(lanes, "PER_ADDRESS", 3)
    monkeypatch.setattr(lanes, "TRANSLATE_ROOM", 3)
    monkeypatch.setattr(lanes, "QUEUE_SIZE", 8)
    monkeypatch.setattr(lanes, "TRUST_FORWARDED", True)  # as on a Space, behind its proxy
    release.clear()
    queue = demo._queue
    try:
        assert join(url, demo, "trace", "a")[0] == 200  # runs (concurrency 1), the rest wait
        wait_until(lambda: len(lanes.waiting_events(queue)) == 0)
        assert [join(url, demo, "trace", "a")[0] for _ in range(2)] == [200, 200]
        status, body = join(url, demo, "trace", "a")
        assert status == 503 and "this session already has 2 requests waiting" in body, body
        assert join(url, demo, "trace", "b")[0] == 200  # the same address: 3 waiting now
        status, body = join(url, demo, "trace", "c")
        assert status == 503 and "this address already has 3 requests waiting" in body, body
        status, body = join(url, demo, "trace", "c", "203.0.113.7, 127.0.0.1")  # a hop of its own: the same address
        assert status == 503 and "this address" in body, body
        assert join(url, demo, "trace", "d", "203.0.113.7")[0] == 200  # another address: 4 waiting
        assert join(url, demo, "trace", "e", "203.0.113.8")[0] == 200  # 5 waiting = 8 - TRANSLATE_ROOM
        status, body = join(url, demo, "trace", "f", "203.0.113.9")
        assert status == 503 and "kept for /translate" in body, body
        assert join(url, demo, "translate", "a")[0] == 200  # the flooding session still gets /translate in
        assert join(url, demo, "page_translate", "a")[0] == 200  # and the page's own translate view
    finally:
        release.set()
        wait_until(lambda: len(queue) == 0 and all(job is None for job in queue.active_jobs))


def test_a_lane_runs_its_slots_lets_some_wait_and_refuses_the_rest_at_once():
    lane = lanes.Lane("test", slots=1, waiting=1, wait_s=10)
    let_go, started, outcomes = threading.Event(), [], []

    def hold():
        started.append(1)
        let_go.wait(10)
        return "ran"

    def call():
        try:
            outcomes.append(lane.run(hold))
        except lanes.Busy as err:
            outcomes.append(str(err))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(started) == 1)
    begun = time.perf_counter()
    call()  # a third: one runs, one waits, so this one is refused at once
    assert time.perf_counter() - begun < 1 and "2 test calls running or waiting" in outcomes[0]
    let_go.set()
    for thread in threads:
        thread.join()
    assert outcomes[1:] == ["ran", "ran"] and len(started) == 2


def test_a_lane_tells_a_caller_busy_when_no_slot_comes_free_in_time():
    lane = lanes.Lane("slow", slots=1, waiting=1, wait_s=0.2)
    let_go = threading.Event()
    holder = threading.Thread(target=lane.run, args=(let_go.wait, 10))
    holder.start()
    wait_until(lambda: lane._inside == 1)
    with pytest.raises(lanes.Busy, match="no slow slot came free in 0 s"):
        lane.run(lambda: None)
    let_go.set()
    holder.join()
    assert lane.run(lambda: "free again") == "free again"
