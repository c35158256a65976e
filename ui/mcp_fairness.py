"""Fair MCP: each MCP client gets its own share of the queue, and a refusal in the app's words.

Gradio's MCP server answers over stateless streamable HTTP and sends every tool call through one loopback
gradio_client, so all MCP clients look like one caller to the queue's caps (ui/lanes.py), and a refused call
comes back as gradio_client's "Queue is full! Please try again.". Here:
- `stateful_sessions` gives each MCP client a session of its own (the `mcp-session-id` header, which Gradio
  passes on to the queue with the call), at most MCP_SESSIONS of them, dropped after SESSION_IDLE_S idle;
- `fair_tool_calls` checks a tool call against the same caps before it is queued (lanes.refusal, with the
  client's session as the caller) and refuses it with lanes.BUSY, so one client's flood leaves the
  others' calls their own places.
"""

from __future__ import annotations

from . import lanes
from .public import SESSION_CAPACITY, SESSION_IDLE_S

MCP_SESSIONS = SESSION_CAPACITY  # MCP clients kept at once, as browser sessions are
MCP_IN_FLIGHT = lanes.PER_SESSION  # tool calls one MCP client may have running or waiting, as a browser tab may wait


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
            kwargs.update(stateless=False, session_idle_timeout=SESSION_IDLE_S, max_sessions=MCP_SESSIONS)
            super().__init__(app, *args, **kwargs)

    GradioMCPServer.StreamableHTTPSessionManager = SessionPerClient
    return True


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

    return types.ServerResult(types.CallToolResult(content=[types.TextContent(type="text", text=lanes.BUSY.format(
        why=why))], isError=True))


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
