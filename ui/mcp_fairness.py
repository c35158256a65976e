"""Fair MCP: each MCP client gets its own share of the queue, and a refusal in the app's words.

Gradio's MCP server answers over stateless streamable HTTP and sends every tool call through one loopback
gradio_client, so all MCP clients look like one caller to the queue's caps (ui/lanes.py), and a refused call
comes back as gradio_client's "Queue is full! Please try again.". Here:
- `stateful_sessions` gives each MCP client a session of its own (the `mcp-session-id` header, which Gradio
  passes on to the queue with the call), at most MCP_SESSIONS_PER_ADDRESS from one client address (on a Space,
  the address the proxy saw), counted and registered under the transport's lock so that sessions opened at once
  are held to it too, and at most MCP_SESSIONS in all: when the app is full, the address holding the most
  sessions gives up its longest idle one to an address holding fewer, so a handful of addresses cannot keep the
  others out; sessions are dropped after SESSION_IDLE_S idle; a session refused is refused in the app's words;
- `fair_tool_calls` checks a tool call against the same caps before it is queued (lanes.refusal, with the
  client's session as the caller) and refuses it with lanes.BUSY, so one client's flood leaves the
  others' calls their own places.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import Counter

from . import lanes
from .public import SESSION_CAPACITY, SESSION_IDLE_S

MCP_SESSIONS = SESSION_CAPACITY  # MCP clients kept at once, as browser sessions are
MCP_IN_FLIGHT = lanes.PER_SESSION  # tool calls one MCP client may have running or waiting, as a browser tab may wait
MCP_SESSIONS_PER_ADDRESS = 16  # one address cannot hold every session: 200 / 16 addresses fill the cap at least
_OPENING_ADDRESS: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_opening_address", default=None)


class SessionRefused(Exception):
    """A session that may not open: its HTTP status and why, in the app's words."""

    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status


def address_full() -> str:
    return (
        f"this address already has {MCP_SESSIONS_PER_ADDRESS} MCP sessions open: close one (HTTP DELETE with its "
        "mcp-session-id) or let one end, then connect again"
    )


def app_full() -> str:
    return (
        f"the app has {MCP_SESSIONS} MCP sessions open, as many as it keeps, none of them an address's more than "
        "yours: try again in a few minutes, when idle ones have ended"
    )


def refused_session(status: int, why: str):
    """A session refused in the app's words (a JSON-RPC error, as the MCP transport answers)."""
    from starlette.responses import JSONResponse

    return JSONResponse(
        {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32000, "message": why}}, status_code=status
    )


def stateful_sessions() -> bool:
    """Make the MCP transport keep a session per client. False where the mcp package is missing."""
    try:
        from gradio.mcp import GradioMCPServer
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # noqa: F401
    except ImportError:
        return False
    original = GradioMCPServer.StreamableHTTPSessionManager  # the class Gradio builds its transport with
    if getattr(original, "one_session_per_client", False):
        return True

    class SessionPerClient(original):
        one_session_per_client = True

        def __init__(self, app, *args, **kwargs):
            kwargs.update(stateless=False, session_idle_timeout=SESSION_IDLE_S, max_sessions=None)  # the cap: below
            super().__init__(app, *args, **kwargs)
            self._address_of = lanes.MCP_ADDRESSES  # session id -> the client address that opened it, for the queue too
            self._last_used: dict[str, float] = {}  # session id -> when it was last asked anything

        def sessions_of(self, address: str) -> int:
            """Open sessions of one address (ended ones forgotten first)."""
            for session in [s for s in self._address_of if s not in self._server_instances]:
                del self._address_of[session]
                self._last_used.pop(session, None)
            return sum(1 for a in self._address_of.values() if a == address)

        def _admit_session(self, requestor):
            """Under the manager's lock, with no await between the count and the registration: the per-address cap
            and the global one hold however many sessions are opened at once."""
            address = _OPENING_ADDRESS.get()
            if address is not None and self.sessions_of(address) >= MCP_SESSIONS_PER_ADDRESS:
                raise SessionRefused(429, address_full())
            if len(self._server_instances) >= MCP_SESSIONS and not evict_for(self, address):
                raise SessionRefused(503, app_full())
            transport = super()._admit_session(requestor)
            if transport is not None and address is not None:
                self._address_of[transport.mcp_session_id] = address
                self._last_used[transport.mcp_session_id] = time.monotonic()
            return transport

        async def _handle_stateful_request(self, scope, receive, send):
            from starlette.requests import Request

            request = Request(scope, receive)
            session = request.headers.get("mcp-session-id")
            if session is not None:
                self._last_used[session] = time.monotonic()
                return await super()._handle_stateful_request(scope, receive, send)
            token = _OPENING_ADDRESS.set(lanes.client_address(request))  # a client opening a session
            try:
                return await super()._handle_stateful_request(scope, receive, send)
            except SessionRefused as refused:
                return await refused_session(refused.status, str(refused))(scope, receive, send)
            finally:
                _OPENING_ADDRESS.reset(token)

    GradioMCPServer.StreamableHTTPSessionManager = SessionPerClient
    return True


def evict_for(manager, address: str | None) -> bool:
    """The app is full: the address holding the most sessions gives up its longest idle one, if it holds more than
    the opener would then (so a handful of addresses cannot keep the others out). False: none. Called under the
    manager's session lock, with no await."""
    live = manager._server_instances
    held = Counter(a for s, a in manager._address_of.items() if s in live)
    if not held:
        return False
    biggest, count = held.most_common(1)[0]
    if count <= held.get(address, 0) + 1:
        return False
    oldest = min((s for s, a in manager._address_of.items() if a == biggest and s in live),
                 key=lambda s: manager._last_used.get(s, 0.0))  # fmt: skip
    transport = live.pop(oldest)
    manager._session_owners.pop(oldest, None)
    manager._address_of.pop(oldest, None)
    manager._last_used.pop(oldest, None)
    asyncio.get_running_loop().create_task(transport.terminate())  # its ID answers 404 from now on
    return True


class DisconnectInOneLine(logging.Filter):
    """An MCP client that goes away mid-answer is one line in the log, not a ClosedResourceError traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and type(error).__name__ in ("ClosedResourceError", "BrokenResourceError"):
            record.msg, record.args, record.exc_info, record.exc_text = "an MCP client disconnected", (), None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"  # a client going away: no error of the app
        return True


def quiet_disconnects() -> None:
    """Install DisconnectInOneLine on the MCP transport's loggers."""
    for name in (
        "mcp.server.streamable_http",
        "mcp.server.streamable_http_manager",
        "mcp.server.lowlevel.server",
        "mcp.server.sse",
    ):
        logging.getLogger(name).addFilter(DisconnectInOneLine())


def refusal(mcp_server, request, caller: str, http, running: int) -> str | None:
    """Why this client's tool call may not be queued now (its own calls in flight, or the queue's caps)."""
    if running >= MCP_IN_FLIGHT:
        return f"this MCP client already has {running} calls running or waiting: wait for their answers"
    queue = getattr(mcp_server.blocks, "_queue", None)
    endpoint = mcp_server.tool_to_endpoint.get(request.params.name) or ""
    if queue is None:
        return None
    return lanes.refusal(queue, lanes.lane_of(endpoint.lstrip("/")), caller, lanes.client_address(http))


def busy_result(why: str):
    from mcp import types

    return types.ServerResult(
        types.CallToolResult(content=[types.TextContent(type="text", text=lanes.BUSY.format(why=why))], isError=True)
    )


def fair_tool_calls() -> bool:
    """Check every MCP tool call against the queue's caps, per MCP client, before Gradio queues it."""
    try:
        from gradio.mcp import GradioMCPServer
        from mcp import types
    except ImportError:
        return False
    create = GradioMCPServer.create_mcp_server
    if getattr(create, "fair", False):
        return True

    def create_mcp_server(self):
        server = create(self)
        call_tool = server.request_handlers[types.CallToolRequest]
        in_flight: dict[str, int] = {}  # per MCP client; the handlers run on one event loop, so no lock

        async def checked_call(request: types.CallToolRequest):
            http = server.request_context.request
            caller = lanes.mcp_caller(http.headers) if http is not None else None
            if caller is None:
                return await call_tool(request)
            if (why := refusal(self, request, caller, http, in_flight.get(caller, 0))) is not None:
                return busy_result(why)
            in_flight[caller] = in_flight.get(caller, 0) + 1
            try:
                return await call_tool(request)
            finally:
                in_flight[caller] -= 1
                if not in_flight[caller]:
                    del in_flight[caller]

        server.request_handlers[types.CallToolRequest] = checked_call
        return server

    create_mcp_server.fair = True
    GradioMCPServer.create_mcp_server = create_mcp_server
    return True
