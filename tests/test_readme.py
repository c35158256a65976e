"""Every Python snippet in README.md runs as written, from the repository root.

Snippets that talk to the demo (they connect to http://127.0.0.1:7860/) run against app.py started
by the test on a free port with the shipped checkpoint; the address in the snippet is rewritten to it.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.app_server import running_app

ROOT = Path(__file__).resolve().parent.parent
DEMO_URL = "http://127.0.0.1:7860/"


def python_snippets() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


SNIPPETS = python_snippets()


def test_readme_has_snippets():
    assert len(SNIPPETS) >= 2, "README.md lost its Python examples"


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory):
    """The real app with the shipped checkpoint, started only if a snippet needs it."""
    env = {"MODEL_ID": str(ROOT / "checkpoints" / "de-en")}
    with running_app(tmp_path_factory.mktemp("readme-app") / "app.log", **env) as url:
        yield url


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_readme_snippet_runs(index, request, tmp_path):
    code = SNIPPETS[index]
    if DEMO_URL in code:
        code = code.replace(DEMO_URL, request.getfixturevalue("demo_url"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"README snippet {index + 1} failed:\n{code}\n{result.stderr[-3000:]}"
