"""An API call's body read with bounds before Gradio parses it (ui/json_bodies.py): nested too deep, or not JSON,
it is answered 400 in words naming the argument; a good call passes unchanged. Against app.py on the tiny
checkpoint as a Space runs it."""

import json

import pytest

from tests.test_public import post, server  # noqa: F401  (server: the fixture)
from ui.json_bodies import ARGUMENTS, MAX_DEPTH, problem


def test_a_body_nested_too_deep_is_refused_naming_its_argument_and_a_bad_one_naming_what_it_takes():
    ARGUMENTS.setdefault("taps", ["text", "names", "options", "model"])
    deep = b'{"data": ["Ein Hund.", ' + b"[" * 5000 + b"]" * 5000 + b', null, "auto"]}'
    assert problem(deep, "taps") == f"names nests 5,002 levels deep; a call nests at most {MAX_DEPTH}"
    options = b'{"data": ["Ein Hund.", ["logits"], ' + b'{"a": ' * 40 + b"1" + b"}" * 40 + b', "auto"]}'
    assert problem(options, "taps").startswith("options nests 42 levels deep")
    said = problem(b'{"data": ["Ein Hund.", ["logits"]', "taps")
    assert said.startswith("the request is not JSON (") and '{"data": [text, names, options, model]}' in said
    assert (
        problem(json.dumps({"data": ["[[[[" * 20, ["logits"], None, "auto"]}).encode(), "taps") is None
    )  # in a string
    assert problem(json.dumps({"data": ["Ein Hund.", [[[["x"]]]], None, "auto"]}).encode(), "taps") is None


@pytest.mark.server
def test_the_app_refuses_them_before_gradio_and_answers_a_good_call(server):  # noqa: F811
    url = server + "gradio_api/call/taps"
    status, body = post(url, b'{"data": ["Ein Hund.", ' + b"[" * 5000 + b"]" * 5000 + b', null, "auto"]}')
    assert status == 400 and "names nests 5,002 levels deep" in body, (status, body[:300])
    status, body = post(url, b'{"data": ["Ein Hund.", ["logits"]')
    assert status == 400 and "not JSON" in body and "[text, names, decoding" in body, (status, body[:300])
    status, body = post(url, {"data": ["Ein Hund.", ["encoder.0.self_attn.weights"], "greedy", 1, 1.0, 64, "auto"]})
    assert status == 200 and "event_id" in body, (status, body[:300])
