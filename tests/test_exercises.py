"""The exercises: every check passes the solutions and catches every planted bug; the notebook runs unwritten."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
# each runs the shipped model over a sentence many times (about 10 s apiece): CI runs them, the fast half does not
pytestmark = pytest.mark.slow


def test_selftest_passes_the_solutions_and_catches_every_bug():
    done = subprocess.run(
        [sys.executable, "-m", "exercises", "selftest"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(lines) == 7, done.stdout
    for line in lines:
        assert "reference ... pass" in line, line
        caught, planted = line.rsplit("bugs caught ", 1)[1].split("/")
        assert caught == planted and int(planted) >= 3, line


def test_the_notebook_runs_from_a_fresh_kernel_with_nothing_written():
    notebook = nbformat.read(ROOT / "exercises" / "exercises.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    printed = "".join(
        output.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )
    assert printed.count("not written yet") == 7, printed
    assert not any(output.output_type == "error" for cell in notebook.cells for output in cell.get("outputs", []))
