"""Every path a comment, docstring or document names in the repository exists: a pointer to a file that moved or
never existed sends a reader nowhere."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = "model|lens|ui|training|training_data|tokenizer|generation|translation|compiled|corpora|exercises|recipes|bench|tools|load|tests|docs"
POINTER = re.compile(rf"(?<![\w./-])((?:{FOLDERS})/[\w./-]*?\.(?:py|js|md|css|json|wat|ipynb))(?![\w-])")


def test_every_named_path_exists():
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT, check=True).stdout.split()
    stale = {}
    for name in files:
        if not name.endswith((".py", ".js", ".md", ".css", ".ts", ".sh")):
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        missing = {m.group(1) for m in POINTER.finditer(text) if not (ROOT / m.group(1)).exists()}
        if missing:
            stale[name] = sorted(missing)
    assert stale == {}, stale
