"""A large answer costs its own caller, not everyone: its weights share one float object per value (8 bytes a weight,
not 32), Gradio passes over rows of numbers instead of walking them element by element on its event loop, and the
session sweeper stops counting a kept value once it knows it is large. `python load/abuse.py --only explain_flood
--repeats 3` measures what this buys (docs/limits.md)."""

import json

import numpy as np

from lens.maps import rounded_lists
from ui import public


def test_rounded_weights_are_the_same_json_and_share_their_floats():
    rng = np.random.default_rng(0)
    maps = rng.random((3, 4, 30, 31))
    shared = rounded_lists(maps, 3)
    assert json.dumps(shared) == json.dumps(np.round(maps, 3).tolist())
    flat = [w for layer in shared for head in layer for row in head for w in row]
    assert len({id(w) for w in flat}) <= 1001 < len(flat)  # one object per value at 3 decimals
    for odd in (np.array([-0.5, 0.25]), np.array([np.nan, 0.5]), np.array([1.5])):  # outside [0, 1]: as numpy rounds
        assert json.dumps(rounded_lists(odd, 3)) == json.dumps(np.round(odd, 3).tolist())
    assert rounded_lists(maps, 6) == np.round(maps, 6).tolist()  # more decimals: not shared


def test_gradio_passes_over_rows_of_numbers_and_still_finds_files():
    from gradio_client import utils as client_utils

    public.fast_traversal()
    public.fast_traversal()  # twice: installed once
    data = {
        "maps": [[[0.1, 0.2], [0.3, None]]],
        "file": {"path": "x.png", "meta": {"_type": "gradio.FileData"}},
        "rows": [(1, 2.5, True)],
        "words": ["a", "b"],
    }
    seen = []
    out = client_utils.traverse(data, lambda d: seen.append(d) or {**d, "url": "u"}, client_utils.is_file_obj_with_meta)
    assert out["maps"] == data["maps"] and out["rows"] == [[1, 2.5, True]] and out["words"] == ["a", "b"]
    assert seen == [data["file"]] and out["file"]["url"] == "u"
    assert public.numbers_only([1.0, 2, None, False]) and not public.numbers_only([1.0, "a"])
    assert not public.numbers_only([[1.0]]) and not public.numbers_only({"a": 1})


def test_the_sweeper_stops_counting_once_a_value_is_large():
    big = [[0.5] * 1000 for _ in range(1000)]
    assert public._size(big) > 20_000_000
    assert 1_000_000 < public._size(big, 1_000_000) < 1_100_000  # stopped a row past the limit
    assert public._size({"a": "xyz", "b": [1, 2]}) == 2 + 3 + 32 * 2 + 0  # keys, the string, the row


def test_a_waiting_session_is_never_the_one_dropped_from_gradios_message_queues():
    import gradio as gr

    with gr.Blocks() as demo:
        gr.Button().click(lambda: None)
    demo.queue()
    demo._queue.pending_messages_per_session.max_size = 3
    public.keep_waiting_sessions(demo)
    kept, busy = demo._queue.pending_messages_per_session, demo._queue.pending_event_ids_session
    for name in ("a", "b", "c"):
        kept[name] = name.upper()
    busy["a"] = {"event-1"}  # "a" still waits for its answer
    kept["d"] = "D"
    assert list(kept) == ["a", "c", "d"]  # the oldest idle one ("b") went, not "a"
    busy.clear()
    kept["e"] = "E"
    assert list(kept) == ["c", "d", "e"] and kept["e"] == "E"
