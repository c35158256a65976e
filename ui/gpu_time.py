"""How long a model run may hold a ZeroGPU GPU, sized to the request it serves.

ZeroGPU checks a visitor's remaining daily quota against the `duration` a GPU function declares, before
the call starts ("You have exceeded your GPU quota (46s left vs. 60s requested)"), and ends a call that
runs past it. A fixed worst case (30 s for every sentence) spends a free visitor's 5 minutes a day ten
requests at a time. So every gpu() function here declares a GpuTime: a callable of the function's own
arguments (spaces.GPU calls it with them) that asks for

    START_SECONDS + SECONDS_PER_UNIT x characters of German x beams x replays of the model

and never more than the function's cap, the time its largest allowed request takes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

START_SECONDS = 5  # the worker's start, the weights' move to the GPU and the first pass
# Above the slowest Multi30k val sentence's CPU time per character and beam on this 2-core machine
# (bench/gpu_time.py: median 0.6-0.9 ms, slowest 3.7 ms, greedy and 4 beams); a GPU takes less, so it errs long.
SECONDS_PER_UNIT = 0.003


def characters(args: tuple) -> int:
    """The German a call reads: its first argument, one sentence or a list of them."""
    first = args[0]
    if isinstance(first, str):
        return len(first)
    return sum(len(s) for s in first if isinstance(s, str))


def beams_of(args: tuple) -> int:
    """The beam count of the call's decoding options (lens.explain.DecodingOptions), where it is passed one,
    bare or in a tuple key; 1 where it has none."""
    for value in args:
        for item in value if isinstance(value, tuple) else (value,):
            beams = getattr(item, "num_beams", None)
            if isinstance(beams, int) and not isinstance(beams, bool):
                return beams
    return 1


@dataclass(frozen=True)
class GpuTime:
    """The seconds one gpu() function asks for, as a callable of its arguments."""

    cap: int  # the most it may ask: the time its largest allowed request takes
    runs: Callable[..., int] | None = None  # how many times it runs the model for one request, from its arguments
    beams: Callable[..., int] | None = None  # its beam count, where no DecodingOptions carries it

    def __call__(self, *args, **kwargs) -> int:
        try:
            beams = self.beams(*args) if self.beams else beams_of(args)
            runs = self.runs(*args) if self.runs else 1
            work = characters(args) * max(1, int(beams)) * max(1, int(runs))
        except (TypeError, ValueError, AttributeError, IndexError):
            return self.cap  # a malformed request is refused inside the call, in words; ask for the most
        return int(min(self.cap, START_SECONDS + math.ceil(work * SECONDS_PER_UNIT)))
