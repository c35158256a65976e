"""ui/api.py's endpoint table is the API: the Gradio endpoints are exactly its rows, each with the shared
decoding signature, and docs/api.md's table lists exactly them, with their lanes and bounds."""

import inspect
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"


@pytest.fixture(scope="module")
def built(tiny_translator):
    import gradio as gr

    from ui import api
    from ui.pair import Pair

    with gr.Blocks() as demo:
        table = api.build(Pair.single(tiny_translator))
    return demo, table


def test_the_endpoints_are_the_tables_rows_with_the_shared_decoding_arguments(built):
    from ui.api import DECODING_PARAMETERS

    demo, table = built
    assert sorted(fn.api_name for fn in demo.fns.values()) == sorted(e.name for e in table)
    shared = [p.name for p in DECODING_PARAMETERS]
    for fn in demo.fns.values():
        names = list(inspect.signature(fn.fn).parameters)
        at = names.index("decoding")
        assert names[at : at + 4] == shared, (fn.api_name, names)
        assert "options" not in names and fn.fn.__doc__.count("num_beams:") == 1, fn.api_name


def test_docs_list_exactly_the_endpoints_with_their_lanes_and_bounds(built):
    _, table = built
    rows = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^\| `/(\w+)` \| ([^|]+) \| ([^|]+) \|", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    }
    assert set(rows) == {e.name for e in table}
    for e in table:
        assert rows[e.name] == (e.lane + (", batched" if e.batched else ""), e.cost), e.name


def test_an_unknown_argument_is_refused_by_name(built):
    import gradio as gr

    demo, _ = built
    translate = next(fn.fn for fn in demo.fns.values() if fn.api_name == "translate")
    with pytest.raises(gr.Error, match="/translate: got an unexpected keyword argument 'colour'"):
        translate("Ein Hund.", colour="red")
