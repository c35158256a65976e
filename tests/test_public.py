"""What the public can send a running app.py: caps before any work, numbers refused by name, typed
special tokens as text, malformed raw calls answered in words, localhost binding, uploads capped.
Plus ui/public.py's queue-full message and session sweeping on a tiny in-process Blocks."""

import json
import math
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ui.app_process import free_port
from ui.app_process import launch_app as start_app

pytestmark = [pytest.mark.server]
ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "Ein Mann fährt Fahrrad."


def launch_app(checkpoint, log_path: Path, **env_extra) -> tuple[subprocess.Popen, str]:
    """app.py in a subprocess as a Space runs it (no GRADIO_SERVER_NAME unless given); waits until it serves."""
    return start_app(log_path, listen_local=False, MODEL_ID=str(checkpoint), **env_extra)


@pytest.fixture(scope="module")
def server(public_app):
    """The app on the tiny checkpoint as a Space runs it: one for the whole session (tests/conftest.py)."""
    return public_app


@pytest.fixture(scope="module")
def reference(tiny_checkpoint):
    from translation import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


def post(url: str, body, content_type="application/json") -> tuple[int, str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def raw_call(server: str, api_name: str, data: list) -> str:
    """POST /gradio_api/call/<api_name>, then read its event stream (what curl users do)."""
    status, body = post(f"{server}gradio_api/call/{api_name}", {"data": data})
    assert status == 200, body
    event_id = json.loads(body)["event_id"]
    with urllib.request.urlopen(f"{server}gradio_api/call/{api_name}/{event_id}", timeout=120) as stream:
        return stream.read().decode()


def result_of(stream: str):
    assert "event: complete" in stream, stream
    return json.loads(stream.split("event: complete\ndata: ", 1)[1].split("\n", 1)[0])[0]


def assert_no_internals(text: str) -> None:
    assert "Traceback" not in text and str(ROOT) not in text and "site-packages" not in text, text


# ----- binding -------------------------------------------------------------------------------------


def test_the_server_name_is_localhost_unless_a_space_or_the_environment_asks():
    from ui.public import server_name

    assert server_name({}) == "127.0.0.1"
    assert server_name({"SPACE_ID": "someone/attention-lens"}) == "0.0.0.0"
    assert server_name({"GRADIO_SERVER_NAME": "0.0.0.0"}) == "0.0.0.0"
    assert server_name({"GRADIO_SERVER_NAME": "127.0.0.1", "SPACE_ID": "x/y"}) == "127.0.0.1"


def listening_addresses(port: int) -> set[str]:
    """Local addresses listening on `port`, from the kernel's socket tables (Linux)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc/net/tcp")
def test_the_app_listens_on_localhost_only_by_default(server):
    port = int(server.rstrip("/").rsplit(":", 1)[1])
    assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1, little-endian hex; not 0.0.0.0


# ----- caps and numbers ----------------------------------------------------------------------------


def test_a_long_text_is_refused_at_once_with_a_message(server):
    start = time.perf_counter()
    stream = raw_call(server, "explain", ["Ein Hund läuft. " * 400, "greedy", 1, 1.0, 16])  # 6,400 characters
    assert "event: error" in stream and "text has 6,400 characters; at most 5,000" in stream, stream
    stream = raw_call(server, "translate", ["Ein Hund läuft. " * 17, "greedy", 1, 1.0, 16])
    assert "text has 17 sentences; at most 16" in stream, stream
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize(
    "index, name, value",
    [
        (2, "num_beams", math.inf),
        (3, "length_penalty", -math.inf),
        (4, "max_length", math.nan),
        (3, "length_penalty", 1e300),
        (2, "num_beams must be a whole number", 2.5),
        (4, "max_length must be a whole number", 2.5),
    ],
)
def test_non_finite_or_out_of_range_numbers_are_refused_by_name(server, index, name, value):
    args = [SENTENCE, "beam search", 2, 1.0, 16]
    args[index] = value
    stream = raw_call(server, "translate", args)  # json.dumps writes NaN/Infinity; the server's parser reads them
    assert "event: error" in stream and name in stream, stream
    assert_no_internals(stream)


def test_typed_special_tokens_are_text_not_control_tokens(server, reference):
    text = "Ein <pad> Hund </s> läuft <s> <unk>."
    result = result_of(raw_call(server, "explain", [text, "greedy", 1, 1.0, 16]))["sentences"][0]
    tokens = result["source_tokens"]
    assert tokens[-1] == "</s>" and tokens.count("</s>") == 1  # only the EOS the code appends
    assert not {"<pad>", "<s>", "<unk>"} & set(tokens), tokens
    ids, _ = reference.encode_source(text)
    assert ids.count(reference.config.eos_id) == 1 and reference.config.pad_id not in ids
    assert reference.tokenizer.decode(ids[:-1]) == text  # every typed character comes back


@pytest.mark.parametrize(
    "api_name, args, message",
    [
        ("translate", ["Ein \ud800 Hund."], "text has a character that is not valid Unicode at position 5"),
        ("translate", [SENTENCE, "greedy", 1, 1.0, 16, "A \udfff"], "prefix has a character that is not valid Unicode"),
        ("ablate", [SENTENCE, '["cross:\u00b2:1"]', "greedy", 1, 1.0, 16], "cross layer must be 1 to 2 or '*'"),
        ("ablate", [SENTENCE, "[" * 100_000 + "]" * 100_000, "greedy", 1, 1.0, 16], "heads: nested too deeply"),
    ],
)
def test_odd_strings_are_refused_naming_the_argument(server, api_name, args, message):
    stream = raw_call(server, api_name, args)
    assert "event: error" in stream and message in stream, stream[:400]
    assert_no_internals(stream)


def page_event(server: str, inputs: list[str]) -> int:
    with urllib.request.urlopen(f"{server}config", timeout=30) as response:
        config = json.load(response)
    kinds = {c["id"]: c["type"] for c in config["components"]}
    return next(i for i, d in enumerate(config["dependencies"]) if [kinds[x] for x in d["inputs"]] == inputs)


@pytest.mark.parametrize("value", ["4", None])
def test_a_page_slider_sent_a_string_or_null_is_named(server, value):
    fn_index = page_event(server, ["textbox", "radio", "slider", "slider", "slider", "radio"])
    status, body = post(
        f"{server}gradio_api/queue/join",
        {"data": [SENTENCE, "greedy", value, 1.0, 16, "auto"], "fn_index": fn_index, "session_hash": f"slider{value}"},
    )
    assert status == 200, body
    with urllib.request.urlopen(f"{server}gradio_api/queue/data?session_hash=slider{value}", timeout=60) as stream:
        answer = stream.read().decode()
    assert "must be a number between 1 and 8, got" in answer and '"error":null' not in answer, answer[-400:]


# ----- malformed calls -----------------------------------------------------------------------------


def test_a_missing_argument_is_named(server):
    stream = raw_call(server, "translate", [])
    assert "event: error" in stream and "text is missing: translate takes 7 values (text, decoding" in stream, stream


def test_unknown_endpoints_get_a_message_not_a_500(server):
    status, body = post(f"{server}gradio_api/call/nothing", {"data": []})
    assert status == 404 and "names no endpoint" in body, body
    status, body = post(f"{server}gradio_api/queue/join", {"data": [], "fn_index": 999, "session_hash": "x1"})
    assert status == 400 and "fn_index 999 names no endpoint" in body, body
    status, body = post(f"{server}gradio_api/call/translate", b"not json")  # said before Gradio reads it
    assert status == 400 and "not JSON" in body and '{\\"data\\": [text, decoding' in body, body
    assert_no_internals(body)
    status, body = post(f"{server}gradio_api/call/translate", json.dumps({"data": "not a list"}).encode())
    assert status == 422, body
    assert_no_internals(body)


def test_uploads_are_refused_whatever_their_size_or_count(server):
    boundary = "attentionlens"

    def form(size: int) -> bytes:
        return (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="f.txt"\r\n'
                f"Content-Type: text/plain\r\n\r\n"
            ).encode()
            + b"x" * size
            + f"\r\n--{boundary}--\r\n".encode()
        )

    for size in (10, 2_000_000) + (100,) * 20:  # small, past the size cap, and many at once
        status, body = post(f"{server}gradio_api/upload", form(size), f"multipart/form-data; boundary={boundary}")
        assert status == 403 and "this app takes no files" in body, (status, body[:200])
        assert_no_internals(body)
    assert post(f"{server}gradio_api/upload/", form(10), f"multipart/form-data; boundary={boundary}")[0] == 403


# ----- ui/public.py on a tiny Blocks: queue full, sessions -------------------------------------------


@pytest.fixture(scope="module")
def tiny_app():
    import gradio as gr

    from ui import public

    deleted = []
    with gr.Blocks() as demo:
        memo = gr.State(time_to_live=600, delete_callback=deleted.append)

        def slow(seconds: float = 0.0) -> str:
            """Sleep, then answer."""
            time.sleep(seconds)
            return "done"

        def remember(text: str, kept):
            return text, (kept or "") + text

        out = gr.Textbox()
        box = gr.Textbox()
        box.submit(remember, [box, memo], [out, memo], api_name="remember")
        gr.api(slow, api_name="slow")
    demo.queue(default_concurrency_limit=1, max_size=1)
    public.friendly_queue_full(demo)
    public.name_missing_arguments(demo)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_port=free_port(), quiet=True)
    yield demo, url, deleted
    demo.close()


def test_a_full_queue_says_busy_try_again(tiny_app):
    demo, url, _ = tiny_app
    answers = []

    def call():
        answers.append(post(f"{url}gradio_api/call/slow", {"data": [1.5]}))

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
        time.sleep(0.1)
    for t in threads:
        t.join()
    busy = [body for status, body in answers if status == 503]
    assert busy and all("busy" in b and "try again in a moment" in b for b in busy), answers
    deadline = time.time() + 20
    while (
        len(demo._queue) or demo._queue.active_jobs.count(None) < len(demo._queue.active_jobs)
    ) and time.time() < deadline:
        time.sleep(0.2)  # let the accepted calls finish before the next test queues


def test_missing_arguments_with_defaults_take_them(tiny_app):
    _, url, _ = tiny_app
    assert result_of(raw_call(url, "slow", [])) == "done"


def test_idle_sessions_are_dropped_and_their_state_deleted(tiny_app):
    from gradio_client import Client

    from ui import public

    demo, url, deleted = tiny_app
    client = Client(url, verbose=False)
    big = "x" * (public.KEPT_VALUE_BYTES * 4)
    assert client.predict(big, api_name="/remember") == big
    session = demo.state_holder.session_data[client.session_hash]
    assert any((c.get("props") or {}).get("value") == big for c in session.config_values.values())
    assert public.sweep_sessions(demo) == 0  # nothing idle yet; the large kept value is let go
    assert not any((c.get("props") or {}).get("value") == big for c in session.config_values.values())
    assert public.sweep_sessions(demo, now=time.time() + public.SESSION_IDLE_S + 1) >= 1
    assert client.session_hash not in demo.state_holder.session_data
    assert big in deleted  # the gr.State's delete_callback saw its value


def test_the_config_names_no_server_path(server, tiny_checkpoint):
    with urllib.request.urlopen(f"{server}config", timeout=30) as response:
        config = response.read().decode()
    assert str(tiny_checkpoint) not in config and str(ROOT) not in config


def test_memory_freed_after_a_spike_is_given_back():
    from ui import public

    def rss_mb() -> float:
        status = Path("/proc/self/status").read_text().splitlines()
        line = next(row for row in status if row.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    chunks = [bytearray(64 * 1024) for _ in range(4_000)]  # 250 MB in heap-sized pieces (under the mmap threshold)
    kept = chunks[::10]  # every tenth stays: the holes between them cannot be trimmed from the top of the heap
    del chunks
    before = rss_mb()
    assert public.give_memory_back()
    after = rss_mb()
    assert before - after > 100, (before, after)
    assert len(kept) == 400


def test_the_sliders_read_their_bounds_from_the_decoding_options(server):
    from lens.explain import BEAMS, LENGTH_PENALTY

    with urllib.request.urlopen(f"{server}config", timeout=30) as response:
        components = {c.get("props", {}).get("elem_id"): c["props"] for c in json.load(response)["components"]}
    for elem_id, bounds in (("beams", BEAMS), ("step-beams", BEAMS), ("length-penalty", LENGTH_PENALTY)):
        assert (components[elem_id]["minimum"], components[elem_id]["maximum"]) == bounds, elem_id


@pytest.mark.parametrize("at, value, label", [(1, "fast", "Search"), (5, "both", "Model")])
def test_a_page_choice_that_is_not_one_is_refused_naming_the_input(server, at, value, label):
    fn_index = page_event(server, ["textbox", "radio", "slider", "slider", "slider", "radio"])
    data = [SENTENCE, "greedy", 1, 1.0, 16, "auto"]
    data[at] = value
    status, body = post(
        f"{server}gradio_api/queue/join", {"data": data, "fn_index": fn_index, "session_hash": f"choice{at}"}
    )
    assert status == 200, body
    with urllib.request.urlopen(f"{server}gradio_api/queue/data?session_hash=choice{at}", timeout=60) as stream:
        answer = stream.read().decode()
    assert f"{label}: '{value}' is not one of" in answer, answer[-400:]
