"""Request bodies read with bounds before Gradio parses them: an API call whose JSON nests deeper than MAX_DEPTH, or
that is not JSON at all, is answered 400 in words that name the argument (Gradio's parser would answer a 5,000-deep
`names` with a RecursionError, and malformed JSON with a parser message that names nothing)."""

from __future__ import annotations

import json
import re

from starlette.responses import JSONResponse

from training_data.checked_json import nesting_depth

MAX_DEPTH = 32  # the body, "data", an argument and its own nesting: the deepest page event nests 8
ROUTES = re.compile(r"/gradio_api/(?:call|run)/(?P<name>[\w-]+)/?$|/gradio_api/queue/join/?$")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_STRUCTURE = re.compile(rb"[^\[\]{},]")
ARGUMENTS: dict[str, list[str]] = {}  # endpoint -> its arguments' names, in order (know_endpoints)


def know_endpoints(arguments: dict[str, list[str]]) -> None:
    """Learn each API endpoint's arguments' names (ui/public.py hands them over), so that a refusal can name one."""
    ARGUMENTS.update(arguments)


def too_deep(raw: bytes) -> tuple[int, int] | None:
    """(depth, index of the argument of "data" where it goes deepest) when the body nests deeper than MAX_DEPTH; the
    depth found at C speed first (model/checkpoint/json_file.nesting_depth), the argument only for a refusal."""
    if nesting_depth(raw) <= MAX_DEPTH:
        return None
    depth, deepest, index, where = 0, 0, 0, -1
    for c in _STRUCTURE.sub(b"", _STRING.sub(b'""', raw)):
        if c in b"[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, index
        elif c in b"]}":
            depth -= 1
            if depth == 1:
                index = 0
        elif depth == 2:
            index += 1
    return deepest, where


def argument(endpoint: str | None, index: int) -> str:
    names = ARGUMENTS.get(endpoint or "", [])
    return names[index] if 0 <= index < len(names) else f"argument {index + 1} of data"


def problem(raw: bytes, endpoint: str | None) -> str | None:
    """Why this body is refused (None: it is JSON nested at most MAX_DEPTH deep)."""
    deep = too_deep(raw)
    if deep is not None:
        return f"{argument(endpoint, deep[1])} nests {deep[0]:,} levels deep; a call nests at most {MAX_DEPTH}"
    try:
        json.loads(raw)
    except (ValueError, RecursionError) as err:
        names = ARGUMENTS.get(endpoint or "")
        takes = f'{{"data": [{", ".join(names)}]}}' if names else '{"data": [...]}'
        return f"the request is not JSON ({getattr(err, 'msg', err)}): this endpoint takes {takes}"
    return None


class BoundedJson:
    """ASGI middleware for the API's POST routes: the body read, checked (problem) and handed on unchanged."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        match = ROUTES.search(scope.get("path", "")) if scope["type"] == "http" and scope["method"] == "POST" else None
        if match is None:
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, _replay([message]), send)
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        why = problem(raw, match.group("name")) if raw.strip() else None
        if why is not None:
            return await JSONResponse({"error": why, "detail": why}, status_code=400)(scope, receive, send)
        return await self.app(
            scope, _replay([{"type": "http.request", "body": raw, "more_body": False}], receive), send
        )


def _replay(messages: list, then=None):
    """A receive() that hands back `messages`, then waits on the real one (a disconnect)."""
    queue = list(messages)

    async def receive():
        if queue:
            return queue.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
