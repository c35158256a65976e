"""The real app.py in a subprocess on a free local port, and headless Chromium: what the tests that drive the
page and the API, and the benchmarks that measure them (bench/), start it with, in one place."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from ui.locales import I18N

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_app(
    log_path: Path, listen_local: bool = True, app_root: Path = ROOT, **env_extra: str
) -> tuple[subprocess.Popen, str]:
    """Start app.py with `env_extra` (MODEL_ID, SNAPSHOTS_DIR, ...) and wait until it serves.

    listen_local=False starts it as a Space would, with no GRADIO_SERVER_NAME set; `app_root`
    another checkout's app.py (bench/app.py compares one with another)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("GRADIO_SERVER_NAME", "SPACE_ID")}
    # No second model to compare with unless a test asks for one (EVERYDAY_MODEL_ID).
    env.update(
        {"GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False", "EVERYDAY_MODEL_ID": "none", **env_extra}
    )
    if listen_local:
        env["GRADIO_SERVER_NAME"] = "127.0.0.1"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=app_root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 180
    while time.time() < deadline:
        assert proc.poll() is None, log_path.read_text()
        try:
            urllib.request.urlopen(url, timeout=2)
            return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise AssertionError("the app did not start: " + log_path.read_text())


@contextlib.contextmanager
def running_app(log_path: Path, **env_extra: str) -> Iterator[str]:
    """The app's URL while the block runs; the app is stopped after it."""
    proc, url = launch_app(log_path, **env_extra)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextlib.contextmanager
def in_process_app(checkpoint: Path) -> Iterator:
    """app.py imported into this process with `checkpoint` (MODEL_ID), launched on a free port."""
    import importlib

    os.environ["MODEL_ID"] = str(checkpoint)
    os.environ["EVERYDAY_MODEL_ID"] = "none"
    module = importlib.reload(sys.modules["app"]) if "app" in sys.modules else importlib.import_module("app")
    module.demo.launch(prevent_thread_lock=True, server_port=free_port(), quiet=True, i18n=I18N)
    try:
        yield module
    finally:
        module.demo.close()


@contextlib.contextmanager
def chromium() -> Iterator:
    """Debian's chromium, headless, driven by Playwright (which never downloads a browser here)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
