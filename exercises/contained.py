"""The learner's code run where it cannot take `check` down: each exercise in a child process of its own, with a
time limit, a memory limit and its own process group (so whatever it starts ends with it), its output bounded.

    python -m exercises.contained NAME FILE SENTENCE    # the child: one exercise, its result as the last line

A loop that never ends, a sleep, sys.exit() or os._exit() at import or in a function, a crash, a syntax error, an
import error, a binary file: each comes back as one line in the learner's language (exercises/words.py), and the
exercise counts as failed. The parent reads the child's last line, `RESULT {json}`; nothing else it prints is
trusted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .words import language, say

TIME_LIMIT_S = 20.0  # one exercise's three checks take 2 to 4 s here; a learner's loop is stopped after this
MEMORY_BYTES = 4 << 30  # the child's data: the model and the checks need under 1 GiB
OUTPUT_CHARS = 2000  # of what the learner's code printed, shown
MESSAGE_CHARS = 300  # of one error's message
MARK = "RESULT "


@dataclass
class Outcome:
    """What one contained run gave: the checks' problems (written: the function was written), or one line saying
    why there are no checks to report (`stopped`), and the learner's own output, bounded."""

    written: bool
    problems: dict[str, str]
    stopped: str = ""
    output: str = ""


def bounded(text: str, limit: int = MESSAGE_CHARS) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _limits(memory: int) -> None:  # in the child, before it runs anything
    import resource

    resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(
    exercise: str, path: str | Path, sentence: str, limit_s: float = TIME_LIMIT_S, memory: int = MEMORY_BYTES
) -> Outcome:
    """The exercise checked in a child process; never raises for what the learner's code does."""
    command = [sys.executable, "-m", "exercises.contained", exercise, str(path), sentence]
    env = {**os.environ, "EXERCISES_LANG": language(), "PYTHONDONTWRITEBYTECODE": "1"}
    root = Path(__file__).resolve().parents[1]
    child = subprocess.Popen(
        command,
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: what it starts is ended with it
        preexec_fn=lambda: _limits(memory),
    )
    try:
        out, _ = child.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        _end_group(child)
        return Outcome(True, {}, say("contained.timeout", exercise=exercise, seconds=f"{limit_s:g}"))
    finally:
        _end_group(child)
    text = out.decode("utf-8", errors="replace")
    lines = text.rstrip("\n").split("\n")
    shown = "\n".join(line for line in lines if not line.startswith(MARK))
    shown = shown if len(shown) <= OUTPUT_CHARS else shown[:OUTPUT_CHARS] + "\n…"
    if lines and lines[-1].startswith(MARK):
        try:
            found = json.loads(lines[-1][len(MARK) :])
            return Outcome(found["written"], found["problems"], found.get("stopped", ""), shown)
        except (ValueError, KeyError, TypeError):
            pass
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        return Outcome(True, {}, say("contained.signal", exercise=exercise, signal=name, gib=memory >> 30), shown)
    return Outcome(True, {}, say("contained.exit", exercise=exercise, code=child.returncode), shown)


def _end_group(child: subprocess.Popen) -> None:
    """Kill the child's process group (the learner's own children too), then reap the child."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _child(exercise: str, path: str, sentence: str) -> dict:
    """In the child: load the learner's file, run the checks, say what happened (never a traceback)."""
    from .checks import check_function, load_learner

    try:
        learner = load_learner(path)
        fn = getattr(learner, exercise)
    except SystemExit as err:
        return {
            "written": True,
            "problems": {},
            "stopped": say("contained.exit_at_import", exercise=exercise, code=err.code),
        }
    except SyntaxError as err:
        where = f"{Path(err.filename or path).name}:{err.lineno}"
        return {
            "written": True,
            "problems": {},
            "stopped": say("contained.syntax", exercise=exercise, where=where, error=bounded(err.msg)),
        }
    except BaseException as err:  # noqa: BLE001 - the learner's file may fail in any way: said in one line
        error = bounded(f"{type(err).__name__}: {err}")
        return {
            "written": True,
            "problems": {},
            "stopped": say("contained.load", exercise=exercise, path=path, error=error),
        }
    try:
        result = check_function(exercise, fn, sentence)
    except SystemExit as err:
        return {
            "written": True,
            "problems": {},
            "stopped": say("contained.exit_in_check", exercise=exercise, code=err.code),
        }
    return {"written": result.written, "problems": {k: bounded(v) for k, v in result.problems.items()}}


if __name__ == "__main__":
    exercise, path, sentence = sys.argv[1:4]
    found = _child(exercise, path, sentence)
    sys.stdout.flush()
    os.write(1, ("\n" + MARK + json.dumps(found, ensure_ascii=False) + "\n").encode())
    os._exit(0)  # nothing the learner's code left behind (threads, atexit hooks) runs after the answer
