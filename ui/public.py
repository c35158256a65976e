"""Limits that keep a public Space bounded: where it listens, what it accepts, what it keeps per user.

Gradio keeps a SessionState for every session it has seen (each API call opens one) until 10,000
exist, and each holds the last value of every output it was sent, for deep links (a long text's
maps are tens of MB). We use no deep links, so sessions idle past SESSION_IDLE_S are dropped
(State values through their delete_callback first), large values kept for deep links are let go
after each sweep, and at most SESSION_CAPACITY sessions are kept at all.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping

import gradio as gr
from fastapi import Request
from fastapi.responses import JSONResponse
from gradio.route_utils import FnIndexInferError
from starlette.middleware import Middleware

from .file_ranges import SingleRanges
from .json_bodies import BoundedJson, know_endpoints
from .locales import english

QUEUE_SIZE = 64  # requests waiting; past it a client is told the Space is busy
CONCURRENCY = 2  # model calls at once (2 CPU cores on the free tier; one GPU on ZeroGPU)
BATCHED_CALLS = 32  # /translate calls let in at once: they wait in ui/batching.py and run as batches
BATCH_SENTENCES = 32  # sentences in one batched model call at most
BATCH_WORKERS = 2  # batched model calls at once (one per core: numpy's BLAS runs each on one thread)
SESSION_CAPACITY = 200  # sessions Gradio keeps at most (its default is 10,000)
SESSION_IDLE_S = 15 * 60  # a session unused this long is dropped; the page starts a fresh one
STATE_TTL_S = SESSION_IDLE_S  # time_to_live for any gr.State a view adds
MAX_FILE_SIZE = "1mb"  # a second fence: uploads are refused whole (refuse_uploads), whatever their size
SWEEP_EVERY_S = 10.0  # sessions swept and memory given back this often
KEPT_VALUE_BYTES = 4_096  # outputs kept for deep links larger than this are let go


def limit_malloc_arenas(arenas: int = 2, mmap_threshold: int = 128 * 1024) -> bool:
    """Cap glibc's malloc arenas (as MALLOC_ARENA_MAX=2 would): Gradio's worker threads otherwise each
    keep freed memory in their own arena (soak RSS plateau ~1,020 MB -> ~770 MB). Call before threads start.

    And fix the mmap threshold (as MALLOC_MMAP_THRESHOLD_=131072 would): glibc otherwise raises it
    after each large free, so the next (B*K, V) logits land in the heap and stay there (peak RSS
    translating 128 sentences 429 -> 384 MB, no slower: bench/versus_ct2.py)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        # -8 is M_ARENA_MAX, -3 M_MMAP_THRESHOLD in glibc's malloc.h
        return libc.mallopt(-8, arenas) == 1 and libc.mallopt(-3, mmap_threshold) == 1
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to do
        return False


def give_memory_back() -> bool:
    """Return the heap's free pages to the system (glibc's malloc_trim, every arena): after a large
    answer the freed memory would otherwise stay in the process's RSS. Cheap when there is nothing
    to give back; the sweeper calls it every SWEEP_EVERY_S. False where malloc is not glibc's."""
    try:
        import ctypes

        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except (OSError, AttributeError):
        return False


def server_name(env: Mapping[str, str] = os.environ) -> str:
    """127.0.0.1 on a developer's machine; all interfaces only where a Space or GRADIO_SERVER_NAME asks."""
    if env.get("GRADIO_SERVER_NAME"):
        return env["GRADIO_SERVER_NAME"]
    return "0.0.0.0" if env.get("SPACE_ID") else "127.0.0.1"


def launch_settings(env: Mapping[str, str] = os.environ) -> dict:
    """The keyword arguments of demo.launch(): where it listens, what it accepts, the MCP server
    (when Gradio's mcp extra is installed, as requirements.txt asks)."""
    return {
        "server_name": server_name(env),
        "server_port": int(env.get("GRADIO_SERVER_PORT", 7860)),
        "mcp_server": importlib.util.find_spec("mcp") is not None,
        "max_file_size": MAX_FILE_SIZE,
        "state_session_capacity": SESSION_CAPACITY,
        "app_kwargs": {
            "exception_handlers": {FnIndexInferError: _no_such_endpoint, KeyError: _no_such_endpoint},
            "middleware": [Middleware(RefuseUploads), Middleware(SingleRanges), Middleware(BoundedJson)],
        },
    }


DRAIN_BYTES = 8 << 20  # a refused upload's body is read this far (in memory, dropped) before the answer


async def _drain(receive, limit: int) -> None:
    """Read a request's body and drop it, up to `limit` bytes: a client still sending when the answer
    comes would otherwise see its connection reset instead of the message."""
    seen, more = 0, True
    while more and seen < limit:
        message = await receive()
        seen += len(message.get("body", b""))
        more = message.get("more_body", False)


class RefuseUploads:
    """ASGI middleware: no view or endpoint takes a file, so POST .../upload is refused (403) before its
    body is read, whatever the count or size of the files (Gradio would store each one on disk)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"].rstrip("/").endswith("/upload"):
            await _drain(receive, DRAIN_BYTES)  # read (and drop) the body, so the client hears the answer
            response = JSONResponse(
                {"detail": "this app takes no files: send German text to /translate or /explain"}, status_code=403
            )
            return await response(scope, receive, send)
        return await self.app(scope, receive, send)


async def _no_such_endpoint(request: Request, err: Exception) -> JSONResponse:
    """A call naming an endpoint or fn_index that does not exist: 404 in words (Gradio answers 500)."""
    what = request.url.path.rsplit("/", 1)[-1] if isinstance(err, FnIndexInferError) else f"fn_index {err}"
    return JSONResponse(
        {
            "detail": f"{what} names no endpoint of this app; the endpoints are listed at "
            "/gradio_api/info (e.g. /gradio_api/call/translate)"
        },
        status_code=404,
    )


NUMBERS = frozenset({int, float, bool, type(None)})


def numbers_only(value) -> bool:
    """A list or tuple of numbers alone (an attention map's row): nothing inside it to walk, found at C speed."""
    return isinstance(value, (list, tuple)) and set(map(type, value)) <= NUMBERS


def _size(value, limit: float = math.inf) -> int:
    """A cheap upper-ish estimate of a kept value's size (strings and nested containers), counted only until it
    passes `limit` (the sweeper asks whether a value is large, not how large: a 12 MB answer is not walked whole,
    and a row of numbers is counted at once)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if numbers_only(value):
        return 32 * len(value)  # a pointer and a float object each, as counted one by one
    if isinstance(value, dict):
        parts, total = value.values(), sum(len(str(k)) for k in value)
    elif isinstance(value, (list, tuple)):
        parts, total = value, 8 * len(value)
    else:
        return sys.getsizeof(value)
    for part in parts:
        total += _size(part, limit - total)
        if total > limit:
            break
    return total


def fast_traversal() -> None:
    """Gradio walks every answer, element by element on its event loop, looking for files to serve (twice: to
    move them to its cache and to add its URL); a 12 MB /explain answer of 2.4 million weights held every other
    visitor's answer for seconds. A row of numbers holds no file: it is passed over whole, at C speed."""
    from gradio_client import utils as client_utils

    traverse, async_traverse = client_utils.traverse, client_utils.async_traverse
    if getattr(traverse, "numbers_passed_over", False):
        return

    def passing_over_numbers(json_obj, func, is_root):
        return list(json_obj) if numbers_only(json_obj) else traverse(json_obj, func, is_root)

    async def async_passing_over_numbers(json_obj, func, is_root):
        return list(json_obj) if numbers_only(json_obj) else await async_traverse(json_obj, func, is_root)

    passing_over_numbers.numbers_passed_over = True
    client_utils.traverse, client_utils.async_traverse = passing_over_numbers, async_passing_over_numbers


def sweep_sessions(demo: gr.Blocks, idle_s: float = SESSION_IDLE_S, now: float | None = None) -> int:
    """Drop sessions idle longer than `idle_s` and large values kept for deep links; return sessions dropped."""
    holder = getattr(demo, "state_holder", None)
    if holder is None:  # not launched yet
        return 0
    now = time.time() if now is None else now
    dropped = 0
    for session_id in list(holder.session_data):
        last_used = holder.time_last_used.get(session_id)
        if last_used is None or now - last_used.timestamp() > idle_s:
            holder.delete_state(session_id)  # runs the delete_callback of its gr.State values
            with holder.lock:
                holder.session_data.pop(session_id, None)
                holder.time_last_used.pop(session_id, None)
            dropped += 1
            continue
        session = holder.session_data.get(session_id)
        for config in list(getattr(session, "config_values", {}).values()) if session else []:
            props = config.get("props") if isinstance(config, dict) else None
            if props and _size(props.get("value"), KEPT_VALUE_BYTES) > KEPT_VALUE_BYTES:
                props["value"] = None  # only deep links read it; the browser already has it
    return dropped


def start_sweeper(demo: gr.Blocks, every_s: float = SWEEP_EVERY_S, idle_s: float = SESSION_IDLE_S) -> threading.Thread:
    """Sweep sessions every `every_s` seconds in a daemon thread for as long as the process lives."""

    def loop():
        while True:
            time.sleep(every_s)
            try:
                sweep_sessions(demo, idle_s)
                give_memory_back()
            except Exception as err:  # a sweep must never take the server down
                print(f"session sweep failed: {type(err).__name__}: {err}", file=sys.stderr)

    thread = threading.Thread(target=loop, name="session-sweeper", daemon=True)
    thread.start()
    return thread


BUSY_MESSAGE = "The Space is busy ({waiting} waiting): try again in a moment."


def friendly_queue_full(demo: gr.Blocks) -> None:
    """Past QUEUE_SIZE, raw clients get words instead of Gradio's 'Queue is full. Max size is ...'
    (the page shows Gradio's own 'This application is currently busy. Please try again.'), and an
    unknown fn_index a 400 that says so instead of a 500."""
    queue = demo._queue
    push = queue.push

    async def push_or_busy(body, request, username):
        if body.fn_index is not None and body.fn_index not in demo.fns:
            return False, f"fn_index {body.fn_index} names no endpoint of this app (see /gradio_api/info)", "error"
        success, detail, status = await push(body=body, request=request, username=username)
        if status == "queue_full":
            detail = BUSY_MESSAGE.format(waiting=len(queue))
        return success, detail, status

    queue.push = push_or_busy


def keep_waiting_sessions(demo: gr.Blocks) -> None:
    """Gradio keeps the message queues of its last 2,000 sessions and drops the oldest: a caller whose event waited
    while 2,000 others arrived (a new session per API call or page click) lost its answer, the event ending in a
    KeyError and the caller waiting forever. The oldest session with no event pending is dropped instead."""
    from gradio.utils import LRUCache

    queue = demo._queue
    kept = queue.pending_messages_per_session

    class KeepWaiting(LRUCache):
        def __setitem__(self, key, value) -> None:
            if key not in self and len(self) >= self.max_size:
                busy = queue.pending_event_ids_session
                idle = next((old for old in self if not busy.get(old)), None)
                self.pop(idle if idle is not None else next(iter(self)))
            OrderedDict.__setitem__(self, key, value)
            self.move_to_end(key)

    replacement = KeepWaiting(kept.max_size)
    replacement.update(kept)
    queue.pending_messages_per_session = replacement


def name_missing_arguments(demo: gr.Blocks) -> None:
    """A call with too few values gets the missing parameters' defaults, or a message naming the first
    missing one (Gradio would answer `{"error": null}`); a call with too many is refused naming the count."""
    validate = demo.validate_inputs

    def validate_inputs(block_fn, inputs):
        if isinstance(inputs, list):
            checked_count(block_fn, inputs)
            check_numbers(block_fn, inputs)
        validate(block_fn, inputs)

    demo.validate_inputs = validate_inputs
    # a body refused before Gradio reads it names its argument too (json_bodies.py)
    know_endpoints({str(fn.api_name): input_names(fn) for fn in demo.fns.values() if fn.api_name})


def name_choice_errors(demo: gr.Blocks) -> None:
    """A value that is not one of a Radio's, Dropdown's or CheckboxGroup's choices is refused naming the input
    ("Search: 'fast' is not one of ['beam search', 'greedy']"), not only quoting the value as Gradio does."""
    for block in demo.blocks.values():
        if isinstance(block, (gr.Radio, gr.Dropdown, gr.CheckboxGroup)):
            block.preprocess = _named_choice(block, block.preprocess)


def _named_choice(block, preprocess):
    name = english(getattr(block, "label", None)) or getattr(block, "elem_id", None) or type(block).__name__

    def checked(payload):
        try:
            return preprocess(payload)
        except gr.Error as err:
            if "not in the list of choices" not in str(err.message):
                raise
            choices = [value for _, value in block.choices]
            raise gr.Error(f"{name}: {str(payload)[:60]!r} is not one of {choices}", print_exception=False) from None

    return checked


def input_names(block_fn) -> list[str]:
    """What each input of an event is called: its function's parameter names where they line up with the inputs
    (the API), else the widgets' labels (page events)."""
    wanted = len(block_fn.inputs)
    params = (
        [
            p.name
            for p in inspect.signature(block_fn.fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ][:wanted]
        if block_fn.fn
        else []
    )
    if len(params) == wanted:
        return params
    return [
        english(getattr(block, "label", None)) or getattr(block, "elem_id", None) or type(block).__name__.lower()
        for block in block_fn.inputs
    ]


def checked_count(block_fn, inputs: list) -> None:
    """Missing values take their parameter's default where it has one; otherwise, and for extra values, a
    gr.Error naming what is missing or how many are too many."""
    wanted, names = len(block_fn.inputs), input_names(block_fn)
    what = block_fn.api_name or block_fn.name or "this event"
    if len(inputs) > wanted:
        raise gr.Error(
            f"{what} takes {wanted} values ({', '.join(names)}), got {len(inputs)}: remove the "
            f"{len(inputs) - wanted} extra",
            print_exception=False,
        )
    params = {p.name: p for p in inspect.signature(block_fn.fn).parameters.values()} if block_fn.fn else {}
    for name in names[len(inputs) :]:
        param = params.get(name)
        if param is None or param.default is inspect.Parameter.empty:
            raise gr.Error(
                f"{name} is missing: {what} takes {wanted} values ({', '.join(names)}), got {len(inputs)}",
                print_exception=False,
            )
        inputs.append(param.default)


def check_numbers(block_fn, inputs: list) -> None:
    """A slider or number box sent a string, null, NaN or out of range is refused naming the widget
    (Gradio's own check would fail with a message the visitor never sees)."""
    for block, value in zip(block_fn.inputs, inputs):
        if not isinstance(block, (gr.Slider, gr.Number)):
            continue
        name = english(block.label) or getattr(block, "elem_id", None) or "a number"
        low, high = getattr(block, "minimum", None), getattr(block, "maximum", None)
        span = f" between {low:g} and {high:g}" if low is not None and high is not None else ""
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            raise gr.Error(f"{name} must be a number{span}, got {str(value)[:40]!r}", print_exception=False)


def json_mcp_answers() -> bool:
    """MCP tools answer a dict or list as JSON text (Gradio's MCP server writes str(output), a Python
    repr: single quotes, True, None). Patches the server class once; False where Gradio has no MCP."""
    try:
        from gradio.mcp import GradioMCPServer
    except ImportError:  # the mcp extra is not installed
        return False
    original = GradioMCPServer.postprocess_output_data
    if getattr(original, "answers_json", False):
        return True

    def postprocess_output_data(self, data, root_url):
        as_text = [json.dumps(item, ensure_ascii=False) if isinstance(item, (dict, list)) else item for item in data]
        return original(self, as_text, root_url)

    postprocess_output_data.answers_json = True
    GradioMCPServer.postprocess_output_data = postprocess_output_data
    return True
