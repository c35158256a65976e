"""The files the app serves (the in-browser model's weights and tables, /gradio_api/file=...): one byte range at a
time, and answers that carry their own headers only.

Gradio's ranged answers copy the request's headers into the response (a client's `Set-Cookie`, its `ETag` or
`Content-Type` come back) and fail
with HTTP 500 on several or malformed ranges (`bytes=0-1,2-3`, `bytes=--`, `bytes=1-2-3`). This ASGI middleware
answers a Range header that is not one well-formed range with 416 in words, before Gradio sees it, and lets only
the headers a file answer has through, none of them the request's own. The page's modules (ui/static/*.js, and the catalogues they import,
messages/*.json) import each other by plain names, so no URL of theirs carries a version: their answers say
`Cache-Control: no-cache`, and a browser checks each one (a 304 when it has not changed) instead of running an old
module beside a new one.
"""

from __future__ import annotations

import re

from starlette.responses import PlainTextResponse

SINGLE_RANGE = re.compile(r"bytes=(\d{0,18})-(\d{0,18})")
FILE_ROUTE = "/file="
REVALIDATE = (b"cache-control", b"no-cache")  # a module is checked each time it is imported (see above)
KEPT_HEADERS = frozenset(
    {
        b"content-type",
        b"content-length",
        b"content-range",
        b"content-disposition",
        b"accept-ranges",
        b"etag",
        b"last-modified",
        b"cache-control",
        b"date",
        b"server",
        b"vary",
        b"content-encoding",
        b"x-content-type-options",
    }
)


def range_problem(value: str) -> str | None:
    """Why a Range header is not served (None: it is one well-formed range, bytes=START-END, START- or -SUFFIX)."""
    match = SINGLE_RANGE.fullmatch(value.strip())
    if match is None:
        return "only one byte range is served (bytes=START-END, bytes=START- or bytes=-LENGTH)"
    start, end = match.groups()
    if not start and not end:
        return "a byte range needs a start or a length"
    if start and end and int(start) > int(end):
        return "a byte range's start comes after its end"
    return None


class SingleRanges:
    """ASGI middleware for the file route: 416 for a Range header that is not one well-formed range; the answer's
    headers filtered to those of a file."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or FILE_ROUTE not in scope.get("path", ""):
            return await self.app(scope, receive, send)
        ranges = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"range"]
        problem = "only one Range header is served" if len(ranges) > 1 else range_problem(ranges[0]) if ranges else None
        if problem is not None:
            return await PlainTextResponse(problem, status_code=416)(scope, receive, send)

        module = scope["path"].endswith((".js", ".json"))  # the modules and their message catalogues
        has = {v for k, v in scope.get("headers", []) if k.lower() == b"if-none-match"}
        unchanged = False

        sent = {(k.lower(), v) for k, v in scope.get("headers", [])}

        async def own_headers_only(message):
            nonlocal unchanged
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() in KEPT_HEADERS]
                if message["status"] == 206:
                    headers = not_echoed(headers, sent)
                if module:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"] + [REVALIDATE]
                    unchanged = message["status"] == 200 and any(k.lower() == b"etag" and v in has for k, v in headers)
                if unchanged:  # the browser's copy is this one: 304, no body
                    message = {**message, "status": 304, "headers": not_modified(headers)}
                else:
                    message = {**message, "headers": headers}
            elif unchanged and message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        return await self.app(scope, receive, own_headers_only)


def not_echoed(headers: list, sent: set) -> list:
    """A ranged answer's headers without the request's own: Gradio builds a 206 from a copy of the request's headers
    and then sets its Content-Type and Content-Disposition after them, so of those two the last is the file's, and
    any other header the request carried with the same value is the request's."""
    own = [
        (k, v)
        for k, v in headers
        if k.lower() not in (b"content-type", b"content-disposition") and (k.lower(), v) not in sent
    ]
    for name in (b"content-type", b"content-disposition"):
        own += [(k, v) for k, v in headers if k.lower() == name][-1:]
    return own


def not_modified(headers: list) -> list:
    """A 304's headers: the validators and caching rules of the file, nothing of its body."""
    return [(k, v) for k, v in headers if k.lower() in (b"etag", b"last-modified", b"cache-control", b"date", b"vary")]
