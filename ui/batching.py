"""Model calls that arrive together run as one batch: more users served per CPU.

Decoding one sentence reads every weight of the decoder at every step for a single row, so a
batch of sentences costs little more than one (generation/step_linear.py). A `Batcher` lets calls in:
a call that finds the model free runs at once, alone, as before; calls that arrive while it is
busy wait, and the first of them to get the model takes every waiting call with the same options
(up to `max_items` sentences) into one batched call. Each caller gets back its own results.

A batch that fails is run again call by call, so a bad request fails alone and loses nobody
else's work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(eq=False)
class _Call:
    """One caller's items, waiting for their results."""

    items: list
    key: object  # calls with equal keys (==) can share a batch: the same decoding options
    taken: bool = False  # in a batch, running or run
    done: bool = False
    results: list | None = None
    error: BaseException | None = None


class Batcher:
    """run(items, key) -> one result per item, called for the items of many callers at once."""

    def __init__(self, run: Callable[[list, Any], Sequence[Any]], max_items: int = 32, workers: int = 1):
        if max_items < 1 or workers < 1:
            raise ValueError(f"max_items and workers must be at least 1, got {max_items} and {workers}")
        self.run = run
        self.max_items = max_items
        self.workers = workers
        self._waiting: list[_Call] = []
        self._running = 0  # batches running now
        self._changed = threading.Condition()  # guards everything above; notified when a batch ends
        self.batches = 0  # batches run so far, and the calls they served (bench/app.py reports calls a batch)
        self.calls = 0

    def __call__(self, items: Sequence, key: object) -> list:
        """This caller's results, one per item, in order; raises what running its items raised."""
        call = _Call(list(items), key)
        if not call.items:
            return []
        with self._changed:
            self._waiting.append(call)
            while not call.taken and self._running >= self.workers:
                self._changed.wait()
            if call.taken:  # another caller's batch took it
                self._changed.wait_for(lambda: call.done)
                return self._outcome(call)
            batch = self._take(call)
            self._running += 1
        try:
            self._run_batch(batch)
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()
        return self._outcome(call)

    @staticmethod
    def _outcome(call: _Call) -> list:
        if call.error is not None:
            raise call.error
        return call.results

    def _take(self, call: _Call) -> list[_Call]:
        """`call` and the calls waiting with its key, oldest first, up to max_items items in all."""
        batch, size = [call], len(call.items)
        for other in self._waiting:
            if other is not call and other.key == call.key and size + len(other.items) <= self.max_items:
                batch.append(other)
                size += len(other.items)
        for c in batch:
            c.taken = True
        self._waiting = [c for c in self._waiting if not c.taken]
        self.batches += 1
        self.calls += len(batch)
        return batch

    def _run_batch(self, batch: list[_Call]) -> None:
        """Run the batch's items as one call; on an error, each caller's items alone."""
        try:
            results = list(self.run([item for c in batch for item in c.items], batch[0].key))
            if len(results) != sum(len(c.items) for c in batch):
                raise RuntimeError(
                    f"the model call returned {len(results)} results for {sum(len(c.items) for c in batch)} items"
                )
        except Exception as err:  # noqa: BLE001 (handed to the caller, who raises it)
            if len(batch) > 1:
                for c in batch:  # one call's bad input must not fail the others
                    self._run_batch([c])
                return
            results, batch[0].error = [], err
        start = 0
        for c in batch:
            c.results = results[start : start + len(c.items)]
            start += len(c.items)
        with self._changed:
            for c in batch:
                c.done = True
