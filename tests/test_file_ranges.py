"""ui/file_ranges.py: the in-browser model's files are served one byte range at a time (416 in words for several or
malformed ranges, never HTTP 500), and their answers carry no header the client sent. Against the real Gradio server
(the tiny checkpoint), over raw HTTP."""

import json
import re
import urllib.error
import urllib.request

import pytest

from tests.test_public import server  # noqa: F401  (the fixture)
from ui.file_ranges import range_problem

pytestmark = [pytest.mark.server]


@pytest.mark.parametrize(
    "value, ok",
    [
        ("bytes=0-10", True),
        ("bytes=5-", True),
        ("bytes=-5", True),
        ("bytes=0-1,2-3", False),
        ("bytes=--", False),
        ("bytes=1-2-3", False),
        ("bytes=5-2", False),
        ("bytes=-", False),
        ("items=0-1", False),
        ("bytes=" + "9" * 40 + "-", False),
    ],
)
def test_one_well_formed_range_is_served_and_nothing_else(value, ok):
    assert (range_problem(value) is None) == ok, value


def file_url(server: str) -> str:  # noqa: F811
    with urllib.request.urlopen(f"{server}config", timeout=30) as response:
        config = json.load(response)
    folder = next(
        m.group(1)
        for c in config["components"]
        if (m := re.search(r"data-in-browser='([^']+)'", str(c.get("props", {}).get("value", ""))))
    )
    return server.rstrip("/") + folder + "config.json"


def fetch(url: str, headers: dict) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def test_the_file_route_takes_single_ranges_only_and_echoes_no_header(server):  # noqa: F811
    url = file_url(server)
    sent = {"Set-Cookie": "evil=1", "X-Echo": "hello"}
    status, headers, body = fetch(url, {**sent, "Range": "bytes=0-9"})
    assert status == 206 and len(body) == 10 and headers["content-range"].startswith("bytes 0-9/")
    assert "set-cookie" not in headers and "x-echo" not in headers and "range" not in headers, headers
    names = ("Content-Type", "ETag", "Cache-Control", "Vary", "Last-Modified", "Content-Encoding", "Accept-Ranges",
             "X-Content-Type-Options", "Content-Disposition", "Server")  # fmt: skip
    echoes = {name: f"echo-{i}" for i, name in enumerate(names)}
    status, headers, body = fetch(url, {**echoes, "Range": "bytes=0-9"})
    assert status == 206 and len(body) == 10
    assert not [v for v in headers.values() if "echo-" in v], headers  # none of the ten comes back
    assert headers["content-type"].startswith("application/json"), headers
    for value in ("bytes=0-1,2-3", "bytes=--", "bytes=1-2-3", "bytes=9-2"):
        status, headers, body = fetch(url, {**sent, "Range": value})
        assert status == 416 and b"range" in body and "set-cookie" not in headers, (value, status, body)
    status, headers, body = fetch(url, sent)
    assert status == 200 and json.loads(body)["vocab_size"] > 0 and "x-echo" not in headers


def test_the_page_modules_are_checked_each_time_they_are_imported(server):  # noqa: F811
    """The modules import each other by plain names (no version in their URLs): each answer says no-cache, and a
    browser that has the module gets 304 when it has not changed."""
    with urllib.request.urlopen(f"{server}config", timeout=30) as response:
        config = json.load(response)
    entry = next(
        m.group(1)
        for c in config["components"]
        if (m := re.search(r'import\("([^"]+/page\.js)"\)', str(c.get("props", {}).get("js_on_load") or "")))
    )
    for name in ("page.js", "store.js", "messages/en.json"):
        status, headers, body = fetch(server.rstrip("/") + entry.replace("page.js", name), {})
        assert status == 200 and body and headers.get("cache-control") == "no-cache", (name, status, headers)
        validator = {"If-None-Match": headers["etag"]} if "etag" in headers else {}
        if "last-modified" in headers:
            validator["If-Modified-Since"] = headers["last-modified"]
        assert validator, headers
        assert fetch(server.rstrip("/") + entry.replace("page.js", name), validator)[0] == 304, name
