"""This process's place in a run: device, rank, world, collective calls, and Ctrl-C/SIGTERM handling."""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist

from .checkpointing import rng_state
from .settings import TrainSettings


class Interrupt:
    """Turns Ctrl-C and SIGTERM into a flag the loop checks between steps, so state gets saved."""

    def __init__(self):
        self.requested = False
        self.previous = {sig: signal.signal(sig, self._handle) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum, frame):
        if self.requested:  # a second Ctrl-C means now
            raise KeyboardInterrupt
        self.requested = True
        print(f"\nsignal {signum}: saving the training state, then stopping", file=sys.stderr)


@dataclass
class Process:
    """This process's place in a (possibly distributed) run."""

    device: torch.device
    rank: int = 0
    world: int = 1

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()

    def any(self, flag: bool) -> bool:
        """True on every rank if it is true on one (so all ranks stop at the same step)."""
        if not self.distributed:
            return flag
        value = torch.tensor([float(flag)])
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return bool(value.item())

    def rngs(self) -> list[dict]:
        """Every rank's generators, gathered (each rank restores its own on resume)."""
        mine = rng_state()
        if not self.distributed:
            return [mine]
        gathered = [None] * self.world
        dist.all_gather_object(gathered, mine)
        return gathered


def start_process(settings: TrainSettings) -> Process:
    world = int(os.environ.get("WORLD_SIZE", 1))
    device = torch.device(f"cuda:{os.environ.get('LOCAL_RANK', 0)}" if torch.cuda.is_available() else "cpu")
    if world > 1:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    if settings.threads:
        torch.set_num_threads(settings.threads)
    return Process(device, dist.get_rank() if world > 1 else 0, world)
