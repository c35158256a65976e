"""The checks checked: every solution passes all three, every planted bug fails one, in words that name it.

The words are the current language's (exercises/words.py): `selftest --lang zh-CN` checks the Chinese messages.
"""

from __future__ import annotations

from . import solutions
from .bugs import BUGS, Bug
from .checks import EXERCISES, check_function
from .words import say


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
    return all_good


def _missed(exercise: str, bug: Bug) -> str | None:
    """None when the checks catch the bug and a message names it, else what went wrong."""
    result = check_function(exercise, bug.fn)
    said = " ".join(result.problems.values())
    if result.passed:
        return say("selftest.not_caught", bug=bug.name)
    if bug.words().lower() not in said.lower():
        return say("selftest.not_named", bug=bug.name, said=said)
    return None
