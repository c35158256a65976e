"""One lab run in PyTorch, step for step as the page trains it (ui/static/trainer.js `train`): batches of 18
sequences drawn after the weights, label-smoothed cross-entropy summed over the batch's pieces and divided by their
count, gradients clipped to norm 1, Adam (β 0.9, 0.98, ε 1e-9) on the paper's warm-up schedule or a constant rate."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from .model import DTYPE, LabTransformer
from .random import Mulberry32
from .settings import LabSettings
from .tasks import BOS, EOS, MAX_SEQ, VOCAB, Pair, held_out, letters, pair

PER_BATCH = 256 // (MAX_SEQ + 2)  # 18 sequences, at most 256 pieces
CLIP, BETAS, EPS = 1.0, (0.9, 0.98), 1e-9
DIVERGED = 1000.0  # a loss past it has diverged (it starts near ln 24 = 3.2)
REPORT_EVERY, EVAL_EVERY, HELD, SHOWN = 10, 50, 16, 4


@dataclass
class LabRun:
    """What a run showed: the loss and gradient norm every REPORT_EVERY steps, the accuracies every EVAL_EVERY, and at
    the end the outputs on SHOWN held-out sequences and the first one's cross-attention (layer, head, T, S)."""

    settings: LabSettings
    losses: list[tuple[int, float]] = field(default_factory=list)
    grad_norms: list[tuple[int, float]] = field(default_factory=list)
    accuracy: list[tuple[int, float, float]] = field(default_factory=list)  # (step, teacher-forced, greedy)
    examples: list[tuple[str, str, str]] = field(default_factory=list)  # (input, expected, written)
    cross: list[list[list[list[float]]]] = field(default_factory=list)
    diverged_at: int | None = None

    @property
    def final(self) -> dict[str, float]:
        step, forced, greedy = self.accuracy[-1] if self.accuracy else (0, 0.0, 0.0)
        if self.diverged_at is not None:  # diverged: the worst loss, whatever it reached before
            return {"loss": math.inf, "early": math.inf, "forced": forced, "greedy": greedy}
        recent = [v for _, v in self.losses[-3:]]
        early = [v for step, v in self.losses if step <= self.settings.steps // 3]
        return {
            "loss": sum(recent) / max(1, len(recent)),
            "early": sum(early) / max(1, len(early)),  # how fast it fell: the mean loss of the first third
            "forced": forced,
            "greedy": greedy,
        }


def lr_at(step: int, s: LabSettings) -> float:
    """The paper's schedule: linear warm-up to the peak `lr`, then 1/√step; or the rate held constant."""
    if s.schedule == "constant":
        return s.lr
    return s.lr * min(step / s.warmup, math.sqrt(s.warmup / max(step, 1)))


def by_length(batch: list[Pair]) -> list[tuple[Tensor, Tensor, Tensor]]:
    """The batch as dense tensors, one for each length (no padding: every sequence is computed at its own length)."""
    groups: dict[int, list[Pair]] = {}
    for p in batch:
        groups.setdefault(len(p.src), []).append(p)
    tensor = torch.tensor
    return [
        (tensor([p.src for p in g]), tensor([p.tgt_in for p in g]), tensor([p.tgt_out for p in g]))
        for g in groups.values()
    ]


def loss_of(model: LabTransformer, batch: list[Pair]) -> Tensor:
    count = sum(len(p.tgt_out) for p in batch)
    total = torch.zeros((), dtype=DTYPE)
    for src, tgt_in, tgt_out in by_length(batch):
        logits, _ = model(src, tgt_in)
        total = total + torch.nn.functional.cross_entropy(
            logits.reshape(-1, VOCAB), tgt_out.reshape(-1), label_smoothing=model.s.smoothing, reduction="sum"
        )
    return total / count


def grad_norm_and_clip(model: LabTransformer) -> float:
    grads = [p.grad for p in model.order if p.grad is not None]
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
    scale = min(1.0, CLIP / (norm + 1e-6))
    for g in grads:
        g.mul_(scale)
    return norm


@torch.no_grad()
def greedy(model: LabTransformer, src: tuple[int, ...]) -> list[int]:
    """The answer written piece by piece, each piece fed back (inference, no teacher): at most len(src) pieces."""
    out, source = [BOS], torch.tensor([src])
    while len(out) <= len(src):
        logits, _ = model(source, torch.tensor([out]))
        best = int(logits[0, -1].argmax())
        if best == EOS:
            break
        out.append(best)
    return out[1:]


@torch.no_grad()
def accuracy(model: LabTransformer, pairs: list[Pair]) -> tuple[float, float]:
    """Teacher-forced: the share of pieces whose likeliest prediction, given the true answer so far, is right.
    Greedy: the share of sequences written exactly right with the model's own pieces fed back."""
    right = total = 0
    for src, tgt_in, tgt_out in by_length(pairs):
        logits, _ = model(src, tgt_in)
        right += int((logits.argmax(-1) == tgt_out).sum())
        total += tgt_out.numel()
    exact = sum(greedy(model, p.src) == list(p.tgt_out[:-1]) for p in pairs)
    return right / total, exact / len(pairs)


def finish(model: LabTransformer, run: LabRun, shown: list[Pair]) -> None:
    with torch.no_grad():
        run.examples = [(letters(p.src), letters(p.tgt_out), letters(greedy(model, p.src))) for p in shown]
        _, cross = model(torch.tensor([shown[0].src]), torch.tensor([shown[0].tgt_in]))
        run.cross = [w[0].tolist() for w in cross]


@dataclass
class Stepper:
    """A run ready to step (the page's `startRun`): its model, optimizer and the generator that drew the weights and
    now draws the batches."""

    s: LabSettings
    model: LabTransformer
    optimizer: torch.optim.Optimizer
    random: Mulberry32
    step: int = 0

    @classmethod
    def start(cls, s: LabSettings) -> Stepper:
        s = s.validate()
        random = Mulberry32(1234 + s.seed)
        model = LabTransformer(s, random)
        return cls(s, model, torch.optim.Adam(model.order, lr=s.lr, betas=BETAS, eps=EPS, foreach=False), random)

    def __call__(self) -> tuple[float, float, bool]:
        """One step (the page's `trainStep`): the loss, the gradient norm before clipping, and whether it diverged
        (a loss past DIVERGED, or a loss or norm that is not a number; the weights are then left as they were). The
        clipped gradients stay on the parameters."""
        batch = [pair(self.random, self.s.task) for _ in range(PER_BATCH)]
        self.optimizer.zero_grad(set_to_none=False)
        loss = loss_of(self.model, batch)
        loss.backward()
        norm, self.step = grad_norm_and_clip(self.model), self.step + 1
        if not (math.isfinite(loss.item()) and math.isfinite(norm)) or loss.item() > DIVERGED:
            return loss.item(), norm, True
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(self.step, self.s)
        self.optimizer.step()
        return loss.item(), norm, False


def train(s: LabSettings, on_report: Callable[[LabRun, int], None] | None = None) -> LabRun:
    """Train one run of `s` from its seed; `on_report(run, step)` every REPORT_EVERY steps."""
    stepper = Stepper.start(s)
    run, judged = LabRun(stepper.s), held_out(stepper.s.task, HELD)
    for step in range(1, stepper.s.steps + 1):
        loss, norm, diverged = stepper()
        if diverged:
            run.diverged_at = step
            break
        if step % REPORT_EVERY == 0 or step == stepper.s.steps:
            run.losses.append((step, loss))
            run.grad_norms.append((step, norm))
        if step % EVAL_EVERY == 0 or step == stepper.s.steps:
            run.accuracy.append((step, *accuracy(stepper.model, judged)))
        if on_report and (step % REPORT_EVERY == 0 or step == stepper.s.steps):
            on_report(run, step)
    finish(stepper.model, run, judged[:SHOWN])
    return run
