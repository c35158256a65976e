"""The copy-task lab: train a tiny Transformer on the copy task for a few seconds, reporting the loss,
a few predictions and the cross-attention of one example as it goes. Same task, same step code
as `train.py --task copy`; settings are capped so one lab run stays small.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from generation import generate
from model import Transformer

from .loop import lr_at, make_optimizer, train_step
from .settings import TrainSettings
from .tasks import COPY_FIRST_SYMBOL, CopyTask

# Inclusive bounds of what a lab user may choose, and of the wall time of one run.
CAPS = {"n_layers": (1, 2), "n_heads": (1, 4), "d_model": (16, 64), "steps": (10, 600), "lr": (1e-4, 1e-2)}
MAX_TIME_S = 20.0
LAB_BATCH_TOKENS = 512  # ~36 sequences a step: small enough for quick steps on 2 CPU cores
SHOWN_EXAMPLES = 4


@dataclass
class CopyLabSettings:
    """What a lab user may change; `validate()` enforces CAPS."""

    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    lr: float = 3e-3
    steps: int = 300
    seed: int = 0

    def validate(self) -> CopyLabSettings:
        for name in ("n_layers", "n_heads", "d_model", "steps", "seed"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
        for name, (low, high) in CAPS.items():
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high):
                raise ValueError(f"{name} must be between {low} and {high}, got {value!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        return self

    def train_settings(self) -> TrainSettings:
        """The `--task copy` settings this lab run stands for."""
        return TrainSettings(
            output="",
            task="copy",
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_layers=self.n_layers,
            d_ff=2 * self.d_model,
            lr=self.lr,
            warmup=max(1, min(100, self.steps // 4)),
            max_steps=self.steps,
            batch_tokens=LAB_BATCH_TOKENS,
            max_len=16,
            seed=self.seed,
            snapshot_steps="none",
        ).validate()


@dataclass
class CopyLabProgress:
    """Where a lab run is. Symbols are shown as letters A, B, C, ...; maps are post-softmax."""

    step: int
    total_steps: int
    losses: list[tuple[int, float]] = field(default_factory=list)  # (step, training loss)
    examples: list[tuple[str, str, str]] = field(default_factory=list)  # (input, expected, predicted)
    cross_attention: np.ndarray | None = None  # (layers, heads, T, S) of the first example, teacher-forced
    source_tokens: list[str] = field(default_factory=list)  # S labels
    target_tokens: list[str] = field(default_factory=list)  # T labels (what each row predicts)
    accuracy: float | None = None  # share of the shown examples copied exactly
    elapsed_s: float = 0.0
    done: bool = False
    stopped_by_time: bool = False


def _letters(ids: list[int], eos_id: int) -> str:
    return " ".join(chr(ord("A") + i - COPY_FIRST_SYMBOL) for i in ids if i >= COPY_FIRST_SYMBOL and i != eos_id)


def _labels(ids: list[int], config) -> list[str]:
    names = {config.bos_id: "<s>", config.eos_id: "</s>", config.pad_id: "<pad>"}
    return [names.get(i, chr(ord("A") + i - COPY_FIRST_SYMBOL)) for i in ids]


@torch.inference_mode()
def _look(model: Transformer, task: CopyTask, progress: CopyLabProgress) -> None:
    """Fill in predictions for a few held-out sequences and the cross-attention of the first."""
    model.eval()
    config, batch = model.config, task.held_out
    src = batch.src[:SHOWN_EXAMPLES]
    out = generate(model, src, max_new_tokens=batch.tgt_out.size(1) + 1).tolist()
    examples = []
    for row in range(src.size(0)):
        expected = [t for t in batch.tgt_out[row].tolist() if t != config.pad_id]
        examples.append(
            (
                _letters(src[row].tolist(), config.eos_id),
                _letters(expected, config.eos_id),
                _letters(out[row], config.eos_id),
            )
        )
    progress.examples = examples
    progress.accuracy = sum(e[1] == e[2] for e in examples) / len(examples)
    length = int((batch.tgt_in[0] != config.pad_id).sum())
    src0 = src[:1, : int((src[0] != config.pad_id).sum())]  # (1, S) without padding
    tgt0 = batch.tgt_in[:1, :length]  # (1, T)
    _, maps = model(src0, tgt0, return_attention=True)
    progress.cross_attention = torch.stack([m[0] for m in maps.cross]).float().numpy()  # (L, H, T, S)
    progress.source_tokens = _labels(src0[0].tolist(), config)
    progress.target_tokens = _labels(batch.tgt_out[0, :length].tolist(), config)
    model.train()


def train_copy(
    settings: CopyLabSettings,
    on_progress: Callable[[CopyLabProgress], None] | None = None,
    time_limit_s: float = MAX_TIME_S,
    report_every: int = 20,
) -> CopyLabProgress:
    """Train the copy task within the caps and `time_limit_s` (at most MAX_TIME_S); report as it goes."""
    settings.validate()
    if not (isinstance(time_limit_s, (int, float)) and 0 < time_limit_s <= MAX_TIME_S):
        raise ValueError(f"time_limit_s must be in (0, {MAX_TIME_S:g}], got {time_limit_s!r}")
    threads = torch.get_num_threads()
    # Steps this small are dominated by thread hand-offs: one thread ran 30x more steps than two
    # on a busy 2-core machine (295 against 9 in 20 s).
    torch.set_num_threads(1)
    try:
        return _train(settings, on_progress, time_limit_s, report_every)
    finally:
        torch.set_num_threads(threads)


def _train(settings: CopyLabSettings, on_progress, time_limit_s: float, report_every: int) -> CopyLabProgress:
    run = settings.train_settings()
    task = CopyTask(run)
    torch.manual_seed(run.seed)
    model = Transformer(task.config)
    optimizer = make_optimizer(model, run)
    no_autocast = torch.autocast("cpu", enabled=False)
    progress = CopyLabProgress(step=0, total_steps=run.max_steps)
    start, epoch = time.monotonic(), 0
    while progress.step < run.max_steps and not progress.stopped_by_time:
        for batch in task.batches(epoch, 0):
            lr = lr_at(progress.step + 1, run.lr, run.warmup)
            loss = train_step(model, optimizer, batch, lr, run.label_smoothing, run.clip, no_autocast)
            progress.step += 1
            progress.losses.append((progress.step, round(loss, 4)))
            progress.elapsed_s = time.monotonic() - start
            progress.stopped_by_time = progress.elapsed_s >= time_limit_s
            finished = progress.step >= run.max_steps or progress.stopped_by_time
            if progress.step % report_every == 0 or finished:
                _look(model, task, progress)
                progress.done = finished
                if on_progress is not None:
                    on_progress(progress)
            if finished:
                break
        epoch += 1
    return progress
