"""Bounded lanes: every model call waits in a bounded line, and no one client can fill a line.

Gradio's queue holds at most QUEUE_SIZE waiting events, but lets one client take every place, and
the step view's server functions (gr.HTML server_functions, /gradio_api/component_server) do not
go through it at all: each call runs at once on a thread of its own. So:
- `share_queue` caps the events one client may have waiting: PER_SESSION (one browser tab or
  gradio_client) and PER_ADDRESS (one IP: on a Space, the hop its proxy wrote), each counted
  per lane, and keeps TRANSLATE_ROOM places that only /translate and the page's translate view may
  take, so a client that floods the heavy endpoints leaves translating open, to others and to itself.
- `Lane` runs the server functions: SIDE_SLOTS at once, SIDE_WAITING more may wait, the rest get
  "busy" at once (as a full queue does).
Past a cap a call is refused at once, in words, before any work; nothing waits unboundedly.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

import gradio as gr

from .public import QUEUE_SIZE

PER_SESSION = 4  # events one session may have waiting, per lane
PER_ADDRESS = 16  # events one IP address may have waiting, per lane
TRANSLATE_ROOM = 16  # queue places only /translate may take
CHEAP = frozenset({"translate"})  # the api_names of the cheap lane
PAGE = frozenset({"page-explain", "page-explain-second"})  # the page's own translate view: a lane of its own
SIDE_SLOTS = 1  # step-view server functions running at once
SIDE_WAITING = 3  # and waiting; past that, busy
SIDE_WAIT_S = 60.0  # the longest one waits for a slot before it is told busy
TRUST_FORWARDED = bool(os.environ.get("SPACE_ID"))  # behind a Space's proxy, the client is in X-Forwarded-For

BUSY = "The Space is busy ({why}): try again in a moment."


class Busy(ValueError):
    """A call refused because its lane is full (a ValueError: the views show it as a message)."""


class Lane:
    """At most `slots` calls run at once and `waiting` more wait (for at most `wait_s`); the rest are refused."""

    def __init__(self, name: str, slots: int = SIDE_SLOTS, waiting: int = SIDE_WAITING, wait_s: float = SIDE_WAIT_S):
        self.name, self.slots, self.waiting, self.wait_s = name, slots, waiting, wait_s
        self._running = threading.BoundedSemaphore(slots)
        self._inside = 0  # running or waiting
        self._lock = threading.Lock()

    @contextmanager
    def enter(self):
        with self._lock:
            if self._inside >= self.slots + self.waiting:
                raise Busy(BUSY.format(why=f"{self._inside} {self.name} calls running or waiting"))
            self._inside += 1
        try:
            if not self._running.acquire(timeout=self.wait_s):
                raise Busy(BUSY.format(why=f"no {self.name} slot came free in {self.wait_s:.0f} s"))
            try:
                yield
            finally:
                self._running.release()
        finally:
            with self._lock:
                self._inside -= 1

    def run(self, fn, *args):
        with self.enter():
            return fn(*args)


# MCP session id -> the address of the client that opened it (ui/mcp_fairness.py fills it): Gradio sends every MCP
# tool call through one loopback client, so the queue would see all of them come from 127.0.0.1.
MCP_ADDRESSES: dict[str, str] = {}


def client_address(request) -> str:
    """The caller's IP. On a Space, the last X-Forwarded-For hop: the address the Space's proxy saw (a
    client can write hops of its own before it, not after). Elsewhere the peer's address. An MCP tool call counts
    against the address of the MCP client whose session it carries, not the loopback client Gradio sends it from."""
    session = request.headers.get("mcp-session-id") if request is not None and hasattr(request, "headers") else None
    if session and session in MCP_ADDRESSES:
        return MCP_ADDRESSES[session]
    forwarded = request.headers.get("x-forwarded-for", "") if TRUST_FORWARDED and request is not None else ""
    if forwarded.split(",")[-1].strip():
        return forwarded.split(",")[-1].strip()
    client = getattr(request, "client", None)
    return getattr(client, "host", None) or "unknown"


def lane_of(api_name: str | None, concurrency_id: str | None = None) -> str:
    """cheap (/translate), page (the page's translate view, which a visitor's waiting inside views must not
    block) or heavy (everything else)."""
    return "cheap" if api_name in CHEAP else "page" if concurrency_id in PAGE else "heavy"


def lane_of_fn(fn) -> str:
    return lane_of(getattr(fn, "api_name", None), getattr(fn, "concurrency_id", None))


def waiting_events(queue) -> list:
    """Every event waiting in Gradio's queue (not yet running)."""
    return [event for line in queue.event_queue_per_concurrency_id.values() for event in line.queue]


def mcp_caller(headers) -> str | None:
    """The MCP client a call comes from: its MCP session (ui/mcp_fairness.py keeps one per client). Gradio's MCP
    server sends every client's calls through one loopback client, with the MCP request's own headers."""
    session = headers.get("mcp-session-id") if headers is not None else None
    return f"mcp:{session}" if session else None


def caller_of(event) -> str | None:
    """Whose event this is: an MCP client's session, else the Gradio session (a browser tab, a gradio_client)."""
    return mcp_caller(getattr(event.request, "headers", None)) or event.session_hash


def refusal(queue, lane: str, session: str | None, address: str) -> str | None:
    """Why a new event of this lane, caller (caller_of) and address may not wait now, or None when it may."""
    waiting = waiting_events(queue)
    if lane == "heavy" and len(waiting) >= QUEUE_SIZE - TRANSLATE_ROOM:
        return f"{len(waiting)} waiting; the last {TRANSLATE_ROOM} places are kept for /translate"
    same_lane = [e for e in waiting if lane_of_fn(e.fn) == lane]
    if session and sum(caller_of(e) == session for e in same_lane) >= PER_SESSION:
        return f"this session already has {PER_SESSION} requests waiting: wait for their answers"
    if sum(client_address(e.request) == address for e in same_lane) >= PER_ADDRESS:
        return f"this address already has {PER_ADDRESS} requests waiting: wait for their answers"
    return None


def share_queue(demo: gr.Blocks) -> None:
    """Wrap the queue's push with the caps above (call after public.friendly_queue_full)."""
    queue = demo._queue
    push = queue.push

    async def push_if_room(body, request, username):
        fn = demo.fns.get(body.fn_index) if body.fn_index is not None else None
        if fn is not None:
            caller = mcp_caller(request.headers) or body.session_hash
            why = refusal(queue, lane_of_fn(fn), caller, client_address(request))
            if why is not None:
                return False, BUSY.format(why=why), "queue_full"
        return await push(body=body, request=request, username=username)

    queue.push = push_if_room
