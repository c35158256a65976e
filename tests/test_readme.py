"""Every Python snippet in README.md runs as written, from the repository root.

Snippets that talk to the demo (they connect to http://127.0.0.1:7860/) run against app.py started
by the test on a free port with the shipped checkpoint; the address in the snippet is rewritten to it.
"""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_URL = "http://127.0.0.1:7860/"


def python_snippets() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


SNIPPETS = python_snippets()


def test_readme_has_snippets():
    assert len(SNIPPETS) >= 2, "README.md lost its Python examples"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory):
    """The real app on a free port, started only if a snippet needs it."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("readme-app") / "app.log"
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1",
           "GRADIO_ANALYTICS_ENABLED": "False"}
    env.pop("MODEL_ID", None)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 120
    try:
        while True:
            assert proc.poll() is None, log_path.read_text()
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                assert time.time() < deadline, "the app did not start: " + log_path.read_text()
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_readme_snippet_runs(index, request, tmp_path):
    code = SNIPPETS[index]
    if DEMO_URL in code:
        code = code.replace(DEMO_URL, request.getfixturevalue("demo_url"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"README snippet {index + 1} failed:\n{code}\n{result.stderr[-3000:]}"
