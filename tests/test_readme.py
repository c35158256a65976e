"""README.md is the front door and docs/ holds the rest: every Python snippet of README.md and of
docs/*.md runs as written, from the repository root; README.md stays short; no relative link dangles.

Snippets that talk to the demo (they connect to http://127.0.0.1:7860/) run against app.py started
by the test on a free port with the shipped checkpoint; the address in the snippet is rewritten to it.
A ```python block preceded by an HTML comment `<!-- not run: reason -->` is shown but skipped.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ui.app_process import running_app

ROOT = Path(__file__).resolve().parent.parent
DEMO_URL = "http://127.0.0.1:7860/"
MAX_README_LINES = 250
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SNIPPET = re.compile(r"^(?:<!--\s*not run:(?P<reason>.*?)-->[ \t]*\n)?```python\n(?P<code>.*?)^```", re.S | re.M)


def python_snippets(path: Path) -> list[tuple[str, str | None]]:
    """(code, reason it is not run or None) of every ```python block of one markdown file."""
    text = path.read_text(encoding="utf-8")
    return [(m["code"], m["reason"].strip() if m["reason"] is not None else None) for m in SNIPPET.finditer(text)]


SNIPPETS = [
    (path.relative_to(ROOT).as_posix(), index, code, reason)
    for path in MARKDOWN
    for index, (code, reason) in enumerate(python_snippets(path))
]


def test_readme_has_snippets():
    readme = [s for s in SNIPPETS if s[0] == "README.md"]
    assert len(readme) >= 2, "README.md lost its Python examples"
    assert any(DEMO_URL in code for _, _, code, _ in readme), "README.md lost its gradio_client example"


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")  # [text](target) and ![alt](path)
SRC = re.compile(r"<img\b[^>]*\bsrc=\"([^\"]+)\"", re.I)


def relative_links(text: str) -> list[str]:
    """Targets of markdown links and images and of <img src> outside code blocks, without URLs."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # code blocks are code, not links
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = LINK.findall(text) + SRC.findall(text)
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I) and not t.startswith("#")]


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_to_files(path):
    missing = [
        target
        for target in relative_links(path.read_text(encoding="utf-8"))
        if not (path.parent / target.split("#", 1)[0]).exists()
    ]
    assert not missing, f"{path.relative_to(ROOT)} links to what does not exist: {missing}"


def test_every_docs_file_is_linked_from_readme():
    linked = {
        (ROOT / t.split("#", 1)[0]).resolve() for t in relative_links((ROOT / "README.md").read_text(encoding="utf-8"))
    }
    unlinked = [p.relative_to(ROOT).as_posix() for p in MARKDOWN[1:] if p.resolve() not in linked]
    assert not unlinked, f"README.md's Documentation list misses {unlinked}"


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory):
    """The real app with the shipped checkpoint, started only if a snippet needs it."""
    env = {"MODEL_ID": str(ROOT / "checkpoints" / "de-en")}
    with running_app(tmp_path_factory.mktemp("readme-app") / "app.log", **env) as url:
        yield url


@pytest.mark.slow
@pytest.mark.parametrize(
    "file, index", [(f, i) for f, i, _, _ in SNIPPETS], ids=[f"{f}-{i + 1}" for f, i, _, _ in SNIPPETS]
)
def test_readme_snippet_runs(file, index, request):
    code, reason = next((c, r) for f, i, c, r in SNIPPETS if (f, i) == (file, index))
    if reason is not None:
        pytest.skip(f"{file} snippet {index + 1} is not run: {reason}")
    if DEMO_URL in code:
        code = code.replace(DEMO_URL, request.getfixturevalue("demo_url"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{file} snippet {index + 1} failed:\n{code}\n{result.stderr[-3000:]}"
