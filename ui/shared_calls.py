"""The translate and explain model calls that the page and the API share, batched across users.

Calls that arrive while the model is busy wait and run together as one batched call
(ui/batching.py), so a free CPU Space serves more visitors when many come at once. Each batch is
one @gpu call. On ZeroGPU every call runs alone, as it did before batching: there each visitor's
GPU time counts against that visitor's own quota, and a batch would bill one for all.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from lens.cost import Budget
from lens.explain import DecodingOptions, TextExplanation, explain_batch, sentences_of
from translation import Translator

from .batching import Batcher
from .gpu_time import GpuTime
from .public import BATCH_SENTENCES, BATCH_WORKERS, CONCURRENCY
from .runtime import gpu, on_zero_gpu


@dataclass
class BatchedCalls:
    """One translator's shared batchers."""

    translate: Batcher  # (sentences, (options, English prefix or None)) -> one English sentence each
    explain: Batcher  # (sentences, (options, budget, prefix)) -> one lens.explain.SentenceExplanation each

    def translate_sentences(self, sentences: list[str], options: DecodingOptions, prefix: str | None = None) -> str:
        """The sentences' translations joined into one text, batched with other callers'."""
        return " ".join(o for o in self.translate(sentences, (options, prefix)) if o)

    def explain_text(
        self, text: str, options: DecodingOptions, budget: Budget | None = None, prefix: str | None = None
    ) -> TextExplanation:
        """lens.explain.explain_text, with this text's sentences batched with other callers' (those with the
        same options and prefix). A batch past the budget (lens/cost.py) fails and is run again call by
        call, each against the budget."""
        sentences, left_out = sentences_of(text)
        return TextExplanation(self.explain(sentences, (options, budget, prefix)), options, left_out)


_CALLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CALLS_LOCK = threading.Lock()


def batched_calls(translator: Translator) -> BatchedCalls:
    """The batchers of `translator`, made on first use and shared by every view and endpoint."""
    with _CALLS_LOCK:
        if translator not in _CALLS:
            _CALLS[translator] = _build(translator)
        return _CALLS[translator]


def _build(translator: Translator) -> BatchedCalls:
    @gpu(duration=GpuTime(cap=20))
    def translate_sentences(sentences: list[str], key) -> list[str]:
        options, prefix = key
        return translator.translate(sentences, **options.to_dict(), prefix=prefix)

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # the search, then the maps' pass
    def explain_sentences(sentences: list[str], key) -> list:
        options, budget, prefix = key
        return explain_batch(translator, sentences, options, budget, prefix)

    # max_items=1: no other call joins (a call of many sentences still runs whole).
    size, workers = (1, CONCURRENCY) if on_zero_gpu() else (BATCH_SENTENCES, BATCH_WORKERS)
    return BatchedCalls(
        translate=Batcher(translate_sentences, max_items=size, workers=workers),
        explain=Batcher(explain_sentences, max_items=size, workers=workers),
    )
