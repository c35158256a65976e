"""app.py with ATTENTION_LENS_COMPILE=1 and an empty compile cache: the page answers at once while a child
process builds the packages, and stopping the app stops the build (no compiler is left running)."""

import os
import time
from pathlib import Path

import pytest

from ui.app_process import launch_app

pytestmark = [pytest.mark.server, pytest.mark.slow]


def builders(parent: int) -> list[int]:
    """Processes started by `parent` that build compiled packages (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if (parent == 0 or ppid == parent) and b"compiled.build_child" in command:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes from /proc (Linux)")
def test_the_app_answers_while_the_step_builds_and_takes_the_build_down_with_it(tiny_checkpoint, tmp_path):
    from gradio_client import Client

    cache = tmp_path / "compiled"
    proc, url = launch_app(
        tmp_path / "app.log",
        MODEL_ID=str(tiny_checkpoint),
        ATTENTION_LENS_COMPILE="1",
        ATTENTION_LENS_COMPILE_CACHE=str(cache),
    )
    try:
        english = Client(url, verbose=False).predict(
            "Ein Mann fährt Fahrrad.", "beam search", 4, 1.0, 30, api_name="/translate"
        )
        building = builders(proc.pid)
        assert isinstance(english, str) and english.strip()
        assert building, (tmp_path / "app.log").read_text()[-2000:]  # answered while the packages were still building
        assert not list(cache.glob("step-*.pt2"))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    deadline = time.time() + 20
    while time.time() < deadline and any(
        os.path.exists(f"/proc/{pid}") and b"build_child" in _cmdline(pid) for pid in building
    ):
        time.sleep(0.2)
    assert not [pid for pid in building if os.path.exists(f"/proc/{pid}") and b"build_child" in _cmdline(pid)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
