"""The three checks of an exercise, run in turn, and the plain-words report of what they found.

1. shapes: the function on random sizes (exercises/shapes.py);
2. values: against the same tap of the shipped model on a sentence (exercises/against_model.py);
3. in the model: the function put in its place, and the sentence translated again.

The report speaks English or Chinese, as exercises/words.py says.
"""

from __future__ import annotations

import importlib.util
import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import torch

from . import against_model, contained, shapes
from .words import say

EXERCISES = list(shapes.CHECKS)  # in the order the tutorials build them
LEARNER_FILE = Path(__file__).with_name("exercises.py")
CHECK_NAMES = {"shapes": "check.shapes", "values": "check.values", "in the model": "check.in_the_model"}


@dataclass
class Result:
    exercise: str
    written: bool
    problems: dict[str, str]  # check -> what is wrong; empty when all three pass
    stopped: str = ""  # why the checks could not run at all (a hang, an exit, a file that does not load), one line

    @property
    def passed(self) -> bool:
        return self.written and not self.problems and not self.stopped

    def report(self) -> str:
        """What the checks found, in plain words, in the current language."""
        if self.stopped:
            return self.stopped
        if not self.written:
            return say("report.not_written", exercise=self.exercise)
        if self.passed:
            return say("report.pass", exercise=self.exercise)
        lines = [say("report.failed", exercise=self.exercise, failed=len(self.problems))]
        lines += [say("report.problem", check=say(CHECK_NAMES[c]), problem=p) for c, p in self.problems.items()]
        return "\n".join(lines)


def load_learner(path: str | Path = LEARNER_FILE) -> ModuleType:
    """The learner's file as a module, read fresh (so edits show without restarting a notebook)."""
    spec = importlib.util.spec_from_file_location("learner_exercises", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(say("check.not_python", path=path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _attempt(check: Callable[[], str | None]) -> str | None:
    try:
        return check()
    except NotImplementedError:
        raise
    except Exception as err:  # the learner's code may fail in any way: say how, and where in their code
        frame = traceback.extract_tb(err.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        return say("check.raised", error=type(err).__name__, message=contained.bounded(err), where=where)


def check_function(exercise: str, fn: Callable, sentence: str = against_model.SENTENCE) -> Result:
    """Run the three checks on one function; a NotImplementedError reads as "not written yet"."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tensors of a few thousand numbers: threads cost more than they give
    try:
        run = against_model.run_sentence(sentence)
        found = {
            "shapes": _attempt(lambda: shapes.CHECKS[exercise](fn)),
            "values": _attempt(lambda: against_model.values(exercise, fn, run)),
            "in the model": _attempt(lambda: against_model.swap(exercise, fn, run)),
        }
    except NotImplementedError:
        return Result(exercise, False, {})
    finally:
        torch.set_num_threads(threads)
    return Result(exercise, True, {check: problem for check, problem in found.items() if problem})


MAX_SENTENCE = 300  # characters: one or two sentences, as the page's own limit for a view


def check(
    name: str | None = None,
    path: str | Path = LEARNER_FILE,
    sentence: str = against_model.SENTENCE,
    time_limit: float = contained.TIME_LIMIT_S,
) -> bool:
    """Check one exercise of the learner's file (or all of them), each in a child process with a time and a memory
    limit (exercises/contained.py); print what is wrong; True only if every check of every exercise passed."""
    names = EXERCISES if name is None else [name]
    unknown = [n for n in names if n not in EXERCISES]
    if unknown:
        raise SystemExit(say("check.unknown", name=repr(unknown[0]), names=", ".join(EXERCISES)))
    if not isinstance(sentence, str) or not sentence.strip() or len(sentence) > MAX_SENTENCE:
        raise SystemExit(say("check.sentence", characters=len(str(sentence)), limit=MAX_SENTENCE))
    results = []
    for exercise in names:
        outcome = contained.run(exercise, path, sentence, time_limit)
        if outcome.output.strip():  # what the learner's code printed, bounded
            print(outcome.output.rstrip())
        result = Result(exercise, outcome.written, outcome.problems, outcome.stopped)
        results.append(result)
        print(result.report())
    first = next((r for r in results if not r.written), None)
    if first is not None:  # where to start: the file, the function and its line
        shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
        print(say("report.write_first", file=shown, exercise=first.exercise, line=line_of(path, first.exercise)))
    return all(result.passed for result in results)


def line_of(path: str | Path, function: str) -> int | str:
    """The line of `def function` in the learner's file ("?" where it is not found)."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    return next((i for i, line in enumerate(lines, 1) if line.startswith(f"def {function}(")), "?")
