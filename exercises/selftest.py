"""The checks checked: every solution passes all three, every planted bug fails one, in words that name it.

The words are the current language's (exercises/words.py): `selftest --lang zh-CN` checks the Chinese messages.
"""

from __future__ import annotations

import re

from . import solutions
from .bugs import BUGS, Bug
from .checks import EXERCISES, check_function
from .words import catalogue, language, say


def selftest() -> bool:
    """One line per exercise: the reference passes, and how many of its planted bugs are caught and named."""
    all_good = True
    for exercise in EXERCISES:
        reference = check_function(exercise, getattr(solutions, exercise))
        missed = [line for bug in BUGS[exercise] if (line := _missed(exercise, bug))]
        caught = len(BUGS[exercise]) - len(missed)
        good = reference.passed and not missed and len(BUGS[exercise]) >= 3
        all_good &= good
        problems = " | ".join(reference.problems.values())
        status = say("selftest.pass") if reference.passed else say("selftest.fail", problems=problems)
        print(say("selftest.line", exercise=exercise, status=status, caught=caught, planted=len(BUGS[exercise])))
        for line in missed:
            print(say("selftest.missed", bug=line))
    return contained_selftest() and all_good


# The learner's code misbehaving, planted into the solutions' file: each must come back as its own one line.
MISBEHAVIOURS = {
    "a loop that never ends": ("def attention(*args, **kwargs):\n    while True:\n        pass\n", "contained.timeout"),
    "os._exit(0) in the function": (
        "def attention(*args, **kwargs):\n    import os\n    os._exit(0)\n",
        "contained.exit",
    ),
    "sys.exit(0) when loaded": ("import sys\nsys.exit(0)\n", "contained.exit_at_import"),
    "a syntax error": ("def attention(:\n", "contained.syntax"),
    "a crash (SIGSEGV)": (
        "def attention(*args, **kwargs):\n    import os, signal\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
        "contained.signal",
    ),
}


def contained_selftest(limit_s: float = 4.0) -> bool:
    """Each misbehaviour planted in a copy of the solutions: `check` says it in its own line and fails."""
    import tempfile
    from pathlib import Path

    from . import contained

    source = Path(solutions.__file__).read_text(encoding="utf-8")
    good = True
    with tempfile.TemporaryDirectory() as folder:
        for name, (code, key) in MISBEHAVIOURS.items():
            path = Path(folder) / "planted.py"
            path.write_text(source + "\n\n" + code, encoding="utf-8")  # the last definition of attention wins
            outcome = contained.run("attention", path, "Ich möchte ein Bier.", limit_s)
            fixed = max(re.split(r"\{\w+\}", catalogue(language()).get(key) or catalogue("en")[key]), key=len)
            caught = bool(outcome.stopped) and fixed.strip() in outcome.stopped  # its own message, not another
            good &= caught
            print(say("selftest.contained", case=name, said=outcome.stopped or "-"))
    return good


def _missed(exercise: str, bug: Bug) -> str | None:
    """None when the checks catch the bug and a message names it, else what went wrong."""
    result = check_function(exercise, bug.fn)
    said = " ".join(result.problems.values())
    if result.passed:
        return say("selftest.not_caught", bug=bug.name)
    if bug.words().lower() not in said.lower():
        return say("selftest.not_named", bug=bug.name, said=said)
    return None
