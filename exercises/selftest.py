"""The checks checked: every solution passes all three, every planted bug fails one, in words that name it."""

from __future__ import annotations

from . import solutions
from .bugs import BUGS
from .checks import EXERCISES, check_function


def selftest() -> bool:
    """One line per exercise: the reference passes, and how many of its planted bugs are caught and named."""
    all_good = True
    for exercise in EXERCISES:
        reference = check_function(exercise, getattr(solutions, exercise))
        missed = []
        for bug in BUGS[exercise]:
            result = check_function(exercise, bug.fn)
            said = " ".join(result.problems.values())
            if result.passed or bug.named_by.lower() not in said.lower():
                missed.append(f"{bug.name} ({'not caught' if result.passed else 'caught, but not named: ' + said})")
        caught = len(BUGS[exercise]) - len(missed)
        good = reference.passed and not missed and len(BUGS[exercise]) >= 3
        all_good &= good
        status = "pass" if reference.passed else "FAIL " + " | ".join(reference.problems.values())
        print(f"{exercise}: reference ... {status}, bugs caught {caught}/{len(BUGS[exercise])}")
        for line in missed:
            print(f"  missed: {line}")
    return all_good
