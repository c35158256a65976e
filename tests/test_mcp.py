"""The app as an MCP server (demo.launch(mcp_server=True)), driven by a real MCP client over
streamable HTTP: the tools, their descriptions and typed arguments, and a translation."""

import asyncio

import pytest

pytest.importorskip("mcp", reason="Gradio's MCP extra (gradio[mcp] in requirements.txt) is not installed")

from tests.test_public import launch_app, server  # noqa: E402, F401  (server: the fixture)

pytestmark = [pytest.mark.server]
SENTENCE = "Ein Mann fährt Fahrrad."


def with_session(url: str, work):
    """Run `work(session)` in an initialised MCP client session against the app's MCP endpoint."""
    from mcp import ClientSession
    from mcp.client import streamable_http

    # newer mcp releases name it streamable_http_client, older ones streamablehttp_client
    connect = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client

    async def main():
        async with connect(url + "gradio_api/mcp/") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(session)

    return asyncio.run(main())


@pytest.fixture(scope="module")
def tools(server):
    async def listing(session):
        return {tool.name: tool for tool in (await session.list_tools()).tools}

    return with_session(server, listing)


def test_translate_and_explain_are_tools_with_typed_described_arguments(tools):
    assert {"translate", "explain", "trace", "ablate"} <= set(tools), sorted(tools)
    for name in ("translate", "explain"):
        tool = tools[name]
        assert tool.description.startswith("Translate German text"), tool.description
        schema = tool.inputSchema
        assert schema["required"] == ["text"]
        types = {arg: spec.get("type") for arg, spec in schema["properties"].items()}
        assert types == {
            "text": "string",
            "decoding": None,
            "num_beams": "integer",
            "length_penalty": "number",
            "max_length": "integer",
            "prefix": "string",
            "model": None,
        }, types
        assert schema["properties"]["decoding"]["enum"] == ["beam search", "greedy"]
        assert schema["properties"]["model"]["enum"] == ["auto", "default", "everyday", "zh-en"]
        assert all(len(spec.get("description", "")) > 20 for spec in schema["properties"].values()), schema
    assert not [name for name in tools if "run" in name], "page events must not be tools"


def test_qkv_is_a_tool_whose_position_arguments_are_typed_and_described(tools):
    schema = tools["qkv"].inputSchema
    assert tools["qkv"].description.startswith("Open up one row of one attention map")
    assert schema["properties"]["kind"]["enum"] == ["encoder", "decoder", "cross"]
    assert {schema["properties"][name]["type"] for name in ("layer", "head", "row")} == {"integer"}
    assert all("counted from 1" in schema["properties"][name]["description"] for name in ("layer", "head", "row"))


def test_the_inside_views_are_tools(tools):
    assert {"qkv", "logit_lens", "contributions", "contrast", "patch"} <= set(tools), sorted(tools)
    assert tools["contributions"].description.startswith("Who wrote each English word")


def test_an_mcp_client_gets_the_translators_translation(server, tiny_checkpoint):
    from translation import Translator

    async def calls(session):
        good = await session.call_tool("translate", {"text": SENTENCE, "decoding": "greedy", "max_length": 20})
        bad = await session.call_tool("translate", {"text": SENTENCE, "length_penalty": 9})
        return good, bad

    good, bad = with_session(server, calls)
    expected = Translator.from_pretrained(tiny_checkpoint, device="cpu").translate(
        SENTENCE, num_beams=1, max_new_tokens=20
    )
    assert not good.isError and good.content[0].text == expected
    assert bad.isError and "length_penalty must be between 0.0 and 3.0" in bad.content[0].text


def test_mcp_tools_answer_json_not_a_python_repr(server):
    import json

    async def calls(session):
        return await session.call_tool("explain", {"text": SENTENCE, "decoding": "greedy", "max_length": 8})

    answer = with_session(server, calls)
    assert not answer.isError
    explained = json.loads(answer.content[0].text)  # a repr ('...', True) would not parse
    assert explained["sentences"][0]["source"] == SENTENCE and isinstance(explained["left_out"], int)


@pytest.fixture(scope="module")
def shipped_server(shipped_app):
    """The app on the shipped checkpoint, whose inside views take long enough on a long sentence to queue."""
    return shipped_app


LONG = (
    "Ein Mann mit einem roten Hut fährt mit seinem Fahrrad über eine lange Brücke, während zwei Kinder am Ufer "
    "des Flusses spielen und eine Frau mit einem Hund im Park spazieren geht, der neben dem alten Bahnhof liegt."
)


def test_one_mcp_client_flooding_leaves_another_its_calls(shipped_server):
    """A flood of 24 calls from one MCP client: the app's own busy message for what does not fit, while a second
    client's 3 calls are all served (before: one shared session, the second client refused with Gradio's text)."""
    from mcp import ClientSession
    from mcp.client import streamable_http

    connect = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client

    async def client(calls: int, tool: str, arguments: dict, delay: float = 0.0):
        await asyncio.sleep(delay)
        async with connect(shipped_server + "gradio_api/mcp/") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await asyncio.gather(*(session.call_tool(tool, arguments) for _ in range(calls)))

    async def main():
        return await asyncio.gather(
            client(24, "contributions", {"text": LONG}),
            client(3, "translate", {"text": SENTENCE, "decoding": "greedy"}, delay=0.5),
            client(3, "trace", {"text": SENTENCE, "decoding": "greedy"}, delay=1.0),
        )

    flood, translations, traces = asyncio.run(main())
    refused = [r.content[0].text for r in flood if r.isError]
    assert refused, "the flood of 24 was never refused: nothing tested"
    assert all("The Space is busy" in text for text in refused), refused[:3]
    for answers in (translations, traces):
        assert [r.isError for r in answers] == [False] * 3, [r.content[0].text[:200] for r in answers]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def open_session(url: str, source: str):
    """POST an MCP initialize from the loopback address `source`; (status, session id or None, body)."""
    import httpx

    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30) as client:
        answer = client.post(
            url + "gradio_api/mcp/", json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"}
        )
        return answer.status_code, answer.headers.get("mcp-session-id"), answer.text


def close_session(url: str, source: str, session: str) -> None:
    import httpx

    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30) as client:
        client.delete(url + "gradio_api/mcp/", headers={"mcp-session-id": session})


def test_one_address_cannot_take_every_mcp_session(server):
    """At most MCP_SESSIONS_PER_ADDRESS sessions from one address (127.0.0.1 here); another address (127.0.0.2, the
    same machine's loopback) still gets one; a session closed frees its place. The refusal is in the app's words."""
    from ui.mcp_fairness import MCP_SESSIONS_PER_ADDRESS

    opened = []
    try:
        for _ in range(MCP_SESSIONS_PER_ADDRESS):
            status, session, body = open_session(server, "127.0.0.1")
            assert status == 200 and session, (status, body)
            opened.append(("127.0.0.1", session))
        status, session, body = open_session(server, "127.0.0.1")
        assert status == 429 and session is None, (status, body)
        assert f"already has {MCP_SESSIONS_PER_ADDRESS} MCP sessions open" in body, body
        status, session, body = open_session(server, "127.0.0.2")  # another client is not shut out
        assert status == 200 and session, (status, body)
        opened.append(("127.0.0.2", session))
        close_session(server, *opened.pop(0))
        status, session, body = open_session(server, "127.0.0.1")
        assert status == 200 and session, (status, body)
        opened.append(("127.0.0.1", session))
    finally:
        for source, session in opened:
            close_session(server, source, session)


def open_at_once(url: str, source: str, count: int) -> list[tuple[int, str | None, str]]:
    """`count` MCP initialize requests from `source`, all sent at once (one connection each)."""
    import asyncio

    import httpx

    async def one() -> tuple[int, str | None, str]:
        async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(local_address=source), timeout=60) as client:
            answer = await client.post(
                url + "gradio_api/mcp/", json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"}
            )
            return answer.status_code, answer.headers.get("mcp-session-id"), answer.text

    async def all_at_once():
        return await asyncio.gather(*(one() for _ in range(count)))

    return asyncio.run(all_at_once())


def test_sessions_opened_at_once_are_held_to_the_address_cap(server):
    """200 initialize requests sent at once from one address open MCP_SESSIONS_PER_ADDRESS sessions; the others are
    refused, each in the app's words (the count and the registration happen under one lock)."""
    from ui.mcp_fairness import MCP_SESSIONS_PER_ADDRESS

    answers = open_at_once(server, "127.0.0.3", 200)
    opened = [a for a in answers if a[0] == 200 and a[1]]
    try:
        assert len(opened) == MCP_SESSIONS_PER_ADDRESS, sorted({a[0] for a in answers})
        refused = [a for a in answers if a[0] != 200]
        assert len(refused) == 200 - MCP_SESSIONS_PER_ADDRESS and all(a[0] == 429 for a in refused)
        assert all(f"already has {MCP_SESSIONS_PER_ADDRESS} MCP sessions open" in a[2] for a in refused)
    finally:
        for _, session, _ in opened:
            close_session(server, "127.0.0.3", session)


def test_a_handful_of_addresses_cannot_fill_the_app_for_the_others(server):
    """When the app holds MCP_SESSIONS, an address holding fewer than the biggest holder still gets a session: the
    biggest holder's longest idle one ends (its ID then answers 404). The biggest holder itself is refused (503)."""
    from ui.mcp_fairness import MCP_SESSIONS, MCP_SESSIONS_PER_ADDRESS

    opened: list[tuple[str, str]] = []
    try:
        for i in range(-(-MCP_SESSIONS // MCP_SESSIONS_PER_ADDRESS)):  # fill the app from 13 addresses
            source = f"127.0.1.{i + 1}"
            want = min(MCP_SESSIONS_PER_ADDRESS, MCP_SESSIONS - len(opened))
            opened += [(source, a[1]) for a in open_at_once(server, source, want) if a[0] == 200 and a[1]]
        assert len(opened) == MCP_SESSIONS
        status, session, body = open_session(server, "127.0.2.1")  # a newcomer: one of the biggest holders gives way
        assert status == 200 and session, (status, body)
        opened.append(("127.0.2.1", session))
        status, session, body = open_session(server, "127.0.1.1")  # a biggest holder: refused
        assert status == 503 and session is None and "none of them an address's more than yours" in body, body
    finally:
        for source, session in opened:
            close_session(server, source, session)


def test_a_client_that_disconnects_is_one_line_in_the_log():
    import logging

    import anyio

    from ui.mcp_fairness import DisconnectInOneLine

    try:
        raise anyio.ClosedResourceError()
    except anyio.ClosedResourceError:
        import sys

        record = logging.LogRecord(
            "mcp.server.streamable_http", logging.ERROR, __file__, 1, "Error in message router", (), sys.exc_info()
        )
    assert DisconnectInOneLine().filter(record) and record.exc_info is None and record.levelno == logging.WARNING
    assert logging.Formatter().format(record) == "an MCP client disconnected"
    other = logging.LogRecord(
        "mcp", logging.ERROR, __file__, 1, "something else", (), (ValueError, ValueError("x"), None)
    )
    DisconnectInOneLine().filter(other)
    assert other.exc_info is not None  # other errors keep their traceback


def test_an_mcp_call_counts_against_its_clients_address_not_the_loopback():
    """Gradio sends every MCP tool call through one loopback client; the queue's per-address caps (ui/lanes.py) see
    the address of the MCP client whose session the call carries."""
    from types import SimpleNamespace

    from ui import lanes

    lanes.MCP_ADDRESSES["abc123"] = "203.0.113.7"
    try:
        loopback = SimpleNamespace(headers={"mcp-session-id": "abc123"}, client=SimpleNamespace(host="127.0.0.1"))
        assert lanes.client_address(loopback) == "203.0.113.7"
        unknown = SimpleNamespace(headers={"mcp-session-id": "other"}, client=SimpleNamespace(host="127.0.0.1"))
        assert lanes.client_address(unknown) == "127.0.0.1"
    finally:
        del lanes.MCP_ADDRESSES["abc123"]
