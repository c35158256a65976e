"""Every argument checked by name on the running app: ±inf indices, control and direction characters in a
prefix, extra values, a page event sent too few inputs; pieces named as a person reads them. Against the real
Gradio server (the tiny checkpoint), over raw HTTP as curl users call it."""

import json
import math

import pytest

from tests.test_public import post, raw_call, result_of, server  # noqa: F401  (server: the fixture)

pytestmark = [pytest.mark.server]
SENTENCE = "Ein Mann fährt Fahrrad."


def error_of(stream: str) -> str:
    assert "event: error" in stream, stream
    return stream.split("event: error\ndata: ", 1)[1]


def call_with_infinity(server, api_name: str, data: list) -> str:  # noqa: F811
    """JSON has no Infinity; Python's json (and so Gradio) reads it, and a client may send it."""
    body = json.dumps({"data": data}, allow_nan=True)
    status, answer = post(f"{server}gradio_api/call/{api_name}", body.encode())
    assert status == 200, answer
    import urllib.request

    event_id = json.loads(answer)["event_id"]
    with urllib.request.urlopen(f"{server}gradio_api/call/{api_name}/{event_id}", timeout=120) as stream:
        return stream.read().decode()


@pytest.mark.parametrize(
    "api_name, data, name",
    [
        ("qkv", [SENTENCE, "cross", math.inf, 1, 1, "greedy", 1, 1.0, 32], "layer"),
        ("qkv", [SENTENCE, "cross", 1, -math.inf, 1, "greedy", 1, 1.0, 32], "head"),
        ("qkv", [SENTENCE, "encoder", 1, 1, math.inf, "greedy", 1, 1.0, 32], "row"),
        ("contrast", [SENTENCE, math.inf, "woman", "greedy", 1, 1.0, 32], "step"),
        ("patch", [SENTENCE, "Eine Frau fährt Fahrrad.", -math.inf, "greedy", 1, 1.0, 32], "step"),
        ("code", [SENTENCE, math.inf, "greedy", 1, 1.0, 32], "layer"),
    ],
)
def test_infinite_indices_are_refused_by_name(server, api_name, data, name):  # noqa: F811
    message = error_of(call_with_infinity(server, api_name, data))
    assert f"{name} must be a whole number" in message and "OverflowError" not in message, message


@pytest.mark.parametrize("character", ["\u202e", "\u2066", "\x07", "\x1b"])
def test_control_and_direction_characters_in_a_prefix_are_refused(server, character):  # noqa: F811
    message = error_of(raw_call(server, "translate", [SENTENCE, "greedy", 1, 1.0, 32, f"A {character}man"]))
    assert "prefix has a control or text-direction character at position 3" in message, message


def test_extra_values_are_refused_by_name(server):  # noqa: F811
    message = error_of(raw_call(server, "translate", [SENTENCE, "greedy", 1, 1.0, 32, "", "auto", "surplus"]))
    assert (
        "translate takes 7 values (text, decoding, num_beams, length_penalty, max_length, prefix, model), got 8"
        in message
    )
    assert "remove the 1 extra" in message, message


@pytest.fixture(scope="module")
def compare_shaped_app():
    """A Blocks whose page event has the compare view's shape: a tick and five values, a function of *args."""
    import gradio as gr

    from ui import public
    from ui.app_process import free_port

    with gr.Blocks() as demo:
        tick = gr.Checkbox(label="Compare")
        boxes = [gr.Textbox(label=f"box {i}") for i in range(5)]
        out = gr.Textbox()
        tick.change(lambda ticked, *args: str(len(args)), [tick, *boxes], out, api_visibility="private")
    demo.queue()
    public.name_missing_arguments(demo)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_port=free_port(), quiet=True)
    yield url
    demo.close()


def test_a_page_event_sent_too_few_inputs_names_what_is_missing(compare_shaped_app):
    import urllib.request

    status, body = post(
        f"{compare_shaped_app}gradio_api/queue/join",
        {"data": [True, "x"], "fn_index": 0, "session_hash": "trust-missing"},
    )
    assert status == 200, body
    with urllib.request.urlopen(
        f"{compare_shaped_app}gradio_api/queue/data?session_hash=trust-missing", timeout=60
    ) as stream:
        events = stream.read().decode()
    assert "box 1 is missing" in events and "takes 6 values (Compare, box 0, box 1" in events, events[-800:]


def test_contrast_names_the_alternative_as_the_other_pieces(server):  # noqa: F811
    answer = result_of(raw_call(server, "contrast", [SENTENCE, 1, "cat", "greedy", 1, 1.0, 32]))
    assert "\u0120" not in json.dumps(answer, ensure_ascii=False), answer["alternative"]
    assert answer["alternative"].lstrip("\u2581") and not answer["alternative"].startswith("\u0120")


# ----- every argument named, its range before any budget ------------------------------------------------------------


@pytest.mark.parametrize("step", [1e308, 1e18, -3, 2.5])
def test_a_patch_step_out_of_range_is_named_before_the_work_budget(server, step):  # noqa: F811
    message = error_of(raw_call(server, "patch", [SENTENCE, "Ein Hund rennt.", step, "greedy", 1, 1.0, 16]))
    assert "step must be a whole number from 0 to" in message and "Overflow" not in message, message
    assert "million attention weights" not in message, message  # the range, not the work budget


def test_a_contrast_step_out_of_range_is_named_before_any_decoding(server):  # noqa: F811
    message = error_of(raw_call(server, "contrast", [SENTENCE, 10**12, "dog", "greedy", 1, 1.0, 16]))
    assert "step must be a whole number from 1 to" in message, message


@pytest.mark.parametrize("text", ["\u202edog", "do\x07g", "dog\ud800"])
def test_typed_english_refuses_control_bidi_and_lone_surrogates_by_name(server, text):  # noqa: F811
    message = error_of(raw_call(server, "contrast", [SENTENCE, 1, text, "greedy", 1, 1.0, 16]))
    assert "alternative has" in message, message


def test_a_choice_that_is_not_one_is_refused_naming_the_input(server):  # noqa: F811
    message = error_of(raw_call(server, "qkv", [SENTENCE, "sideways", 1, 1, 1, "greedy", 1, 1.0, 16]))
    assert "kind" in message and "sideways" in message, message
    message = error_of(raw_call(server, "translate", [SENTENCE, "fast"]))
    assert "decoding" in message and "fast" in message, message
