"""Decoding with the compiled encoder and decoder step (compiled/step_graph.py, built by compiled/ahead_of_time.py).

`CompiledStep.compile()` finds the two packages built for this very model in `cache_dir` (default
`~/.cache/attention-lens/compiled`, or `$ATTENTION_LENS_COMPILE_CACHE`) and loads them in a fraction of
a second; where they are missing, a child process builds them (one to two minutes), so the serving
process neither holds the compiler's memory nor waits on it. `CompiledDecoder` is generation/step.py's
StepDecoder on those packages: the source encoded by the encoder's, and one (L, N, H, C, d_k) pair of
cache buffers, grown as the eager cache grows, for the step's.

Where no C++ compiler is present or building fails, the reason is logged once and decoding stays on
the eager path (generation/step.py): same tokens either way (tests/test_compiled.py). The compiled step
gives logits only: a search that wants attention rows (lens/trace.py) or switches heads off runs
eager, and explain()'s maps always come from the exact teacher-forced pass."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path

import torch
from torch import Tensor, nn

from generation.search import check_source
from generation.step import CachedDecoder
from generation.step_weights import parameter_versions
from model.attention import padding_mask

from .ahead_of_time import build_in_child, packages
from .package_runner import PackageRunner
from .step_graph import GROW_STEPS, MAX_ROWS, TOP

__all__ = ["CompiledDecoder", "CompiledStep", "MAX_ROWS", "TOP", "versions"]
log = logging.getLogger(__name__)
DEFAULT_CACHE = Path.home() / ".cache" / "attention-lens" / "compiled"
RUNNERS = 2  # calls of the package that can run at once (the app runs 2 batched model calls at once)


class CompiledStep:
    """The compiled step of one model: built (or found in the cache) and loaded once, then called by
    CompiledDecoder.

    `ready` turns True when both packages (the encoder's and the step's) are loaded; until then, and for
    good after a failure (`failure` says why), decoding uses the eager path. `built` says whether this
    call built a package (False: both were in the cache), `seconds` how long finding or building and
    loading took.
    """

    def __init__(self, model: nn.Module, cache_dir: str | Path | None = None, precision: str = "fp32"):
        self.model, self.precision = model, precision  # "int8": weight-only int8 matrices in the graph
        self.cache_dir = Path(cache_dir or os.environ.get("ATTENTION_LENS_COMPILE_CACHE") or DEFAULT_CACHE)
        self.ready, self.built = False, False
        self.failure: str | None = None
        self.seconds: float | None = None
        self.packages: dict[str, Path] = {}  # "encoder", "step": their .pt2 files
        self.calls = 0  # searches decoded with it
        self.search = None  # the native search Translator.compile() installs beside it (compiled/native_search.py)
        self._versions = None
        self._runners: dict[str, PackageRunner | None] = {}
        self._lock = threading.Lock()

    max_rows = MAX_ROWS  # searches of more rows stay eager

    def decoder(self, src: Tensor, num_beams: int, capacity: int) -> CompiledDecoder:
        """The step decoder of src (B, S) on the packages: what generation/search.py asks the installed step for.
        What the packages cannot take (no rows, no tokens, more rows than they were built for) is refused here
        (ValueError, in words), never handed to the compiled code."""
        check_source(src, self.model.config)
        if (
            isinstance(num_beams, bool)
            or not isinstance(num_beams, int)
            or num_beams < 1
            or src.size(0) * num_beams > self.max_rows
        ):
            raise ValueError(
                f"the compiled step takes 1 to {self.max_rows} rows (sentences x beams), got "
                f"{src.size(0)} x {num_beams!r}"
            )
        if (
            isinstance(capacity, bool)
            or not isinstance(capacity, int)
            or not 1 <= capacity <= self.model.config.max_len
        ):
            raise ValueError(f"capacity must be a whole number from 1 to {self.model.config.max_len}, got {capacity!r}")
        return CompiledDecoder(self, src, num_beams, capacity)

    def usable(self) -> bool:
        """Loaded, and the weights are still those it froze."""
        return self.ready and self._versions == versions(self.model)

    def compile(self) -> bool:
        """Find or build, and load (once; later calls return at once). False, with `failure` set, where it cannot."""
        with self._lock:
            if self.ready or self.failure:
                return self.ready
            start = time.perf_counter()
            try:
                self._compile()
            except Exception as error:  # no compiler, an unsupported op, a broken package: the eager path stays
                self.failure = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:300]}"
                log.warning("the compiled decoder step is off (decoding stays eager): %s", self.failure)
                return False
            self.seconds = time.perf_counter() - start
            self.ready = True
            return True

    def _compile(self) -> None:
        if shutil.which(os.environ.get("CXX", "g++")) is None and shutil.which("c++") is None:
            raise RuntimeError("no C++ compiler found (g++ or c++): Inductor needs one on the CPU")
        if next(self.model.parameters()).device.type != "cpu":
            raise RuntimeError("the compiled step is built for the CPU; this model is on another device")
        self._versions = versions(self.model)
        threads = torch.get_num_threads()
        self.packages = packages(self.cache_dir, self.model, self.precision, threads)
        # The step's package first: loading copies a package's weights out of its library, whose pages are then
        # given back (compiled/package_memory.py), so the larger one loads while the smaller is not yet in memory.
        self._runners = {name: self._cached(self.packages[name]) for name in ("step", "encoder")}
        missing = {name: self.packages[name] for name, runner in self._runners.items() if runner is None}
        if missing:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            build_in_child(self.model, self.precision, threads, missing, self.cache_dir / "inductor")
            self.built = True
            self._runners.update({name: load(path) for name, path in missing.items()})

    @staticmethod
    def _cached(package: Path) -> PackageRunner | None:
        """The runner of a package already in the cache; None where there is none, or it does not load."""
        if not package.exists():
            return None
        try:
            return load(package)
        except Exception as error:  # a package cut short or from another machine: built again
            log.warning("the compiled step in %s does not load (%s); building it again", package, error)
            package.unlink(missing_ok=True)
            package.with_suffix(".so").unlink(missing_ok=True)
            return None

    def give_up(self, reason: str) -> None:
        """A call failed: the eager path from now on, said once."""
        with self._lock:
            if self.ready:
                self.ready, self.failure = False, reason
                log.warning("the compiled decoder step is off from now on (decoding stays eager): %s", reason)

    def encode(self, src: Tensor) -> list[Tensor]:
        """src (B, S) -> memory (B, S, D), memory keys and values (L, B, H, S, d_k), source bias (B, 1, 1, S)."""
        with torch.inference_mode():
            return self._runners["encoder"]([src, self.model.embed(src)])  # the table stays out of the package

    def __call__(self, *args: Tensor) -> list[Tensor]:
        """One decoder step (StepGraph.forward's arguments) -> logits (N, V), top log-probabilities and ids (N, TOP)."""
        with torch.inference_mode():
            return self._runners["step"](list(args))


def load(package: Path) -> PackageRunner:
    """The package's runner (compiled/package_runner.py: it lets go of the interpreter lock while it runs), with
    RUNNERS instances so that as many calls can run at once."""
    return PackageRunner(package, RUNNERS)


def versions(model: nn.Module) -> tuple:
    """What the frozen weights were compiled from (generation/step_weights.py)."""
    return parameter_versions(model)


class CompiledDecoder:
    """generation/step.py's StepDecoder on the compiled packages: the source encoded by the compiled encoder, the
    cache one (L, N, H, C, d_k) pair of buffers."""

    def __init__(self, step: CompiledStep, src: Tensor, num_beams: int, capacity: int):
        """src (B, S): the source ids, encoded here by the compiled encoder (one entry per sentence, not per beam)."""
        c = step.model.config
        self.step, self.capacity = step, capacity
        step.calls += 1
        self.memory, self.memory_keys, self.memory_values, self.source_bias = step.encode(src)
        self.src_mask, self.eager = padding_mask(src, c.pad_id), None  # memory and the mask: for a fallback (_replayed)
        rows = src.size(0) * num_beams
        self.keys = self.memory.new_zeros(c.n_decoder_layers, rows, c.n_heads, min(capacity, GROW_STEPS), c.d_k)
        self.values = torch.zeros_like(self.keys)
        self._spares: dict[str, Tensor | None] = {}  # buffers of the keys' and values' shape that reorder writes into
        self.length = 0
        self.positions = torch.arange(capacity, device=src.device)  # position t as a (1,) tensor: a slice
        self.unbanned = self.memory.new_zeros(c.vocab_size)

    def __call__(self, tokens: Tensor, need_weights: bool = False) -> tuple[Tensor, None]:
        if need_weights:
            raise ValueError("the compiled step gives logits only: ask the eager decoder for attention rows")
        outputs = self._step(tokens, self.unbanned)
        return (outputs[0], None) if outputs else self.eager(tokens)

    def ranked(self, tokens: Tensor, banned: Tensor) -> tuple[Tensor, Tensor]:
        """The TOP most likely next tokens of every row with `banned` (V,: 0 or -inf) added to the logits,
        best first: log-probabilities (N, TOP) and ids (N, TOP), ranked inside the step."""
        outputs = self._step(tokens, banned)
        if outputs:
            return outputs[1], outputs[2]
        logits = self.eager(tokens)[0] + banned
        return logits.float().log_softmax(dim=-1).topk(min(TOP, logits.size(1)), dim=1)

    def _step(self, tokens: Tensor, banned: Tensor) -> list[Tensor] | None:
        """The compiled step's outputs; None where the eager decoder decodes (from the call where a package
        call failed on: it is caught up first)."""
        if self.eager is not None:
            return None
        try:
            return self._compiled(tokens, banned)
        except RuntimeError as error:  # a package call that failed (compiled/package_runner.py's check)
            self.step.give_up(f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}")
            self.eager = self._replayed(tokens)
            return None

    def _replayed(self, tokens: Tensor):
        """An eager decoder whose cache holds the steps before the last of `tokens` (N, t)."""
        eager = CachedDecoder(
            self.step.model, self.memory, self.src_mask, tokens.size(0) // self.memory.size(0), self.capacity
        )
        for t in range(1, tokens.size(1)):
            eager(tokens[:, :t])
        return eager

    def _compiled(self, tokens: Tensor, banned: Tensor) -> list[Tensor]:
        position = tokens.size(1) - 1
        if position >= self.keys.size(3):
            self._grow(min(self.capacity, self.keys.size(3) + GROW_STEPS))
        embedded = self.step.model.embed(tokens[:, -1])  # (N, D): the table stays out of the package
        outputs = self.step(
            embedded,
            self.positions[position : position + 1],
            self.keys,
            self.values,
            self.memory_keys,
            self.memory_values,
            self.source_bias,
            banned,
        )
        self.length = position + 1
        return outputs

    def _grow(self, allocated: int) -> None:
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = old.new_zeros(*old.shape[:3], allocated, old.size(4))
            new[:, :, :, : self.length] = old[:, :, :, : self.length]
            setattr(self, name, new)
        self._spares = {}

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        if sentences is not None:
            self.memory, self.src_mask = self.memory[sentences], self.src_mask[sentences]
        if self.eager is not None:
            self.eager.reorder(rows, sentences)
            return
        # The whole buffer (every allocated position: finite, as the masked ones must be) into its spare, in one
        # call: 2-4x faster than copying the used positions out and back.
        for name in ("keys", "values"):
            old, spare = getattr(self, name), self._spares.get(name)
            if spare is None or spare.size(1) != rows.numel():
                spare = old.new_empty(old.size(0), rows.numel(), *old.shape[2:])  # written whole by the select
            torch.index_select(old, 1, rows, out=spare)
            setattr(self, name, spare)
            self._spares[name] = old if old.size(1) == rows.numel() else None
        if sentences is not None:
            self.memory_keys = self.memory_keys[:, sentences]
            self.memory_values = self.memory_values[:, sentences]
            self.source_bias = self.source_bias[sentences]
