"""The training loop: one optimizer step, the schedule, and a run from settings to output folder.

settings -> guards (state belongs, output may be written, locations writable) -> task
-> model, optimizer, saved state -> steps (log, evaluate, snapshot, save) -> finish
"""

from __future__ import annotations

import math
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

import data
from model import Transformer

from .checkpointing import load_state, save_state, save_training_weights
from .finish import finish_run
from .guard import (
    RunError,
    check_locations,
    check_output,
    check_state_belongs,
    run_identity,
)
from .hardware import choose_precision, describe_hardware
from .metrics import (
    append_record,
    keep_records_up_to,
    plot_curves,
    read_jsonl,
    tokens_per_second,
)
from .process import Interrupt, Process, start_process
from .run import RunFiles, RunState, default_work_dir
from .settings import TrainSettings, fingerprint
from .snapshots import push_folder, take_snapshot, write_index
from .tasks import Task, make_task

LOG_EVERY = 50  # steps between loss records in metrics.jsonl


def lr_at(step: int, peak: float, warmup: int) -> float:
    """Linear warmup to `peak`, then decay with the inverse square root of the step (the paper's schedule)."""
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


def train_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: data.Batch,
    lr: float,
    label_smoothing: float,
    clip: float,
    autocast,
) -> float:
    """One optimizer step on a batch with label-smoothed cross-entropy; returns the loss."""
    model.train()
    for group in optimizer.param_groups:
        group["lr"] = lr
    with autocast:
        logits = model(batch.src, batch.tgt_in)  # (B, T, V)
    loss = F.cross_entropy(
        logits.float().view(-1, logits.size(-1)),
        batch.tgt_out.view(-1),
        ignore_index=batch.pad_id,
        label_smoothing=label_smoothing,
    )
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], clip)
    optimizer.step()
    return loss.item()


def make_optimizer(model: Transformer, settings: TrainSettings) -> torch.optim.Adam:
    return torch.optim.Adam(model.parameters(), lr=settings.lr, betas=settings.betas(), eps=settings.adam_eps)


def total_steps(settings: TrainSettings, steps_per_epoch: int) -> int:
    limits = [settings.max_steps] if settings.max_steps else []
    if settings.epochs:
        limits.append(settings.epochs * steps_per_epoch)
    return min(limits)


@dataclass
class Loop:
    """What one process holds while it trains."""

    settings: TrainSettings
    proc: Process
    task: Task
    files: RunFiles
    model: Transformer
    optimizer: torch.optim.Optimizer
    progress: RunState
    run_id: dict
    total: int
    autocast: object
    hardware: str
    plan: set[int] = field(default_factory=set)
    forward_model: torch.nn.Module | None = None  # DistributedDataParallel(model) when distributed

    def __post_init__(self):
        if self.forward_model is None:
            self.forward_model = DistributedDataParallel(self.model) if self.proc.distributed else self.model

    def card_info(self) -> dict:
        return {
            "settings": self.settings.recorded(),
            "data": self.task.data_info(),
            "training": {
                "command": command_line(self.settings),
                "hardware": self.hardware,
                "steps": self.progress.step,
            },
        }

    def run(self, interrupt: Interrupt) -> bool:
        """Train to the last step or until interrupted; True when the last step was reached."""
        lead = self.proc.rank == 0
        bar = tqdm(
            total=self.total,
            initial=self.progress.step,
            disable=not lead,
            dynamic_ncols=True,
            unit="step",
            mininterval=0.5 if sys.stderr.isatty() else 30,
        )
        self.snapshot_if_planned(None)  # step 0: the untrained model
        window = [0, time.time()]  # target tokens, start of the throughput window
        deadline = time.time() + 60 * self.settings.time_limit if self.settings.time_limit else math.inf
        stop = False
        while self.progress.step < self.total and not stop:
            for batch in self.task.batches(self.progress.epoch, self.progress.position):
                started = time.time()
                lr = lr_at(self.progress.step + 1, self.settings.lr, self.settings.warmup)
                loss = train_step(
                    self.forward_model,
                    self.optimizer,
                    batch.to(self.proc.device),
                    lr,
                    self.settings.label_smoothing,
                    self.settings.clip,
                    self.autocast,
                )
                tokens = batch.n_tokens * self.proc.world
                self.progress.advance(tokens, time.time() - started)
                window[0] += tokens
                if self.proc.any(time.time() >= deadline) and self.progress.step < self.total:
                    self.end_schedule_here(bar)
                stop = self.proc.any(interrupt.requested) or self.progress.step >= self.total
                self.after_step(loss, lr, window, bar, stop)
                if stop:
                    break
            else:
                self.progress.next_epoch()
        bar.close()
        return self.progress.step >= self.total

    def end_schedule_here(self, bar) -> None:
        """--time-limit reached: this step becomes the last one (evaluated, snapshotted, finished)."""
        self.total = self.progress.step
        if self.settings.snapshot_steps.strip().lower() != "none":
            self.plan.add(self.total)
        bar.total = self.total
        bar.write(f"time limit of {self.settings.time_limit:g} min reached: step {self.total} is the last")

    def after_step(self, loss: float, lr: float, window: list, bar, stop: bool) -> None:
        step, lead = self.progress.step, self.proc.rank == 0
        if lead:
            rate = tokens_per_second(window[0], time.time() - window[1])
            bar.update(1)
            bar.set_postfix(refresh=False, loss=f"{loss:.3f}", lr=f"{lr:.2e}", tok_s=f"{rate:,.0f}")
            if step % LOG_EVERY == 0:
                append_record(
                    self.files.metrics,
                    step=step,
                    epoch=self.progress.epoch,
                    loss=round(loss, 4),
                    lr=lr,
                    tokens_per_s=rate,
                )
                window[:] = [0, time.time()]
        metrics = None
        if lead and (step % self.settings.eval_every == 0 or step >= self.total):
            metrics = self.evaluate(rotate=True)
            bar.write(f"step {step}: " + ", ".join(f"{k} {v:.4g}" for k, v in metrics.items()))
        self.snapshot_if_planned(metrics)
        if step % self.settings.save_every == 0 or stop:
            self.save()
        self.proc.barrier()

    def evaluate(self, rotate: bool) -> dict:
        """Validate, log, and (at evaluation steps) keep the weights for averaging and as best."""
        metrics = self.task.evaluate(self.model, self.proc.device)
        step = self.progress.step
        append_record(self.files.metrics, step=step, epoch=self.progress.epoch, **metrics)
        if rotate:
            save_training_weights(self.model, self.files.checkpoint(step))
            saved = [s for s in self.progress.saved_steps if s != step] + [step]
            while len(saved) > self.settings.average_last:
                self.files.checkpoint(saved.pop(0)).unlink(missing_ok=True)
            self.progress.saved_steps = saved
            if metrics[self.task.score_key] > self.progress.best_score:
                self.progress.best_score = metrics[self.task.score_key]
                save_training_weights(self.model, self.files.best)
        plot_curves(read_jsonl(self.files.metrics), self.files.curves)
        return metrics

    def snapshot_if_planned(self, metrics: dict | None) -> None:
        step = self.progress.step
        taken = {s["step"] for s in self.progress.snapshots}
        if self.proc.rank != 0 or step not in self.plan or step in taken:
            return
        metrics = metrics or self.evaluate(rotate=False)
        entry = take_snapshot(self.model, self.task, self.files.snapshots, step, metrics, self.card_info())
        self.progress.snapshots.append(entry)
        write_index(self.files.snapshots, self.progress.snapshots)
        if self.settings.push_to_hub:
            push_folder(
                self.files.snapshots / entry["path"],
                self.settings.push_to_hub,
                entry["revision"],
                f"Snapshot at step {step}: " + ", ".join(f"{k} {v:.4g}" for k, v in metrics.items()),
            )

    def save(self) -> None:
        rngs = self.proc.rngs()  # a collective call: every rank takes part
        if self.proc.rank == 0:
            save_state(self.files.state, self.model, self.optimizer, self.progress, self.run_id, rngs)
        self.proc.barrier()  # written before any rank goes on (or tears the group down and exits)


def command_line(settings: TrainSettings) -> str:
    return " ".join(shlex.quote(a) for a in ["train.py", *settings.argv])


def start_from(model: Transformer, folder: Path) -> None:
    """Load the weights of the checkpoint a fine-tuning run starts from (checked as any load is)."""
    trained = Transformer.from_pretrained(folder)
    if trained.config.to_dict() != model.config.to_dict() | {"dropout": trained.config.dropout}:
        raise ValueError(
            f"--init-from {folder}: its config differs from the run's ({trained.config} vs {model.config})"
        )
    model.load_state_dict(trained.state_dict(), strict=True)


def freeze_all_but(model: Transformer, part: str | None) -> None:
    """--train-only: every weight outside `part`'s layers gets no gradient, so the optimizer leaves it as it is."""
    if part:
        for name, weight in model.named_parameters():
            weight.requires_grad_(name.startswith(f"{part}_layers."))


def prepare(settings: TrainSettings, proc: Process) -> Loop | None:
    """Check, build and restore everything the loop needs; None when the run is already finished."""
    output = Path(settings.output)
    files = RunFiles(Path(settings.work_dir) if settings.work_dir else default_work_dir(output))
    if proc.rank == 0:
        check_output(output, None, settings.overwrite)  # a tracked checkpoint: refused before any work
        check_locations(files.work_dir, output)
    task = make_task(settings, files.work_dir, proc.rank, proc.world)
    run_id = run_identity(output, settings.identity(), task.fingerprint())
    meta = check_state_belongs(files.state, run_id)
    if proc.rank == 0:
        check_output(output, run_id, settings.overwrite)
    files.work_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(settings.seed + proc.rank)
    model = Transformer(task.config).to(proc.device)
    optimizer = make_optimizer(model, settings)
    if settings.init_from and not meta:
        start_from(model, Path(settings.init_from))
    freeze_all_but(model, settings.train_only)
    progress = load_state(files.state, model, optimizer, proc.rank) if meta else RunState()
    total = total_steps(settings, task.steps_per_epoch())
    if progress.finished and settings.evaluate_again:
        total = progress.step  # evaluate the finished run as it is (it may have ended early, by --time-limit)
    if meta and not progress.finished and progress.step > total:
        raise RunError(
            f"{files.state} says step {progress.step:,}, beyond this run's schedule of {total:,} steps: "
            "a damaged state, or a schedule made shorter; pass --max-steps/--epochs that reach past it"
        )
    lead = proc.rank == 0
    if progress.finished and progress.step >= total and not settings.evaluate_again:
        if lead:
            print(
                f"this run is finished ({progress.step} steps); its checkpoint is {output}. Nothing to do: "
                "pass --evaluate-again to rerun the final evaluation, or --max-steps/--epochs to train on.",
                file=sys.stderr,
            )
        return None
    if lead:
        keep_records_up_to(files.metrics, progress.step if meta else -1)  # no records past the saved state
        if meta:
            rule = "=" * 78
            print(
                f"{rule}\nRESUMING from step {progress.step} of {total} (epoch {progress.epoch}, batch "
                f"{progress.position}) with {files.state}\nit belongs to this run: same output, settings and "
                f"training data (run {fingerprint(run_id)})\n{rule}",
                file=sys.stderr,
            )
    use_bf16, why = choose_precision(settings.precision, proc.device)
    if lead:
        print(f"precision: {why}", file=sys.stderr)
    autocast = torch.autocast(proc.device.type, dtype=torch.bfloat16, enabled=use_bf16)
    hardware = describe_hardware(proc.device, proc.world, "bf16 autocast" if use_bf16 else "fp32")
    plan = set(settings.snapshot_plan(total))
    return Loop(settings, proc, task, files, model, optimizer, progress, run_id, total, autocast, hardware, plan)


def train(settings: TrainSettings, interrupt: Interrupt | None = None) -> int:
    """Run (or resume, or finish) the training that `settings` describe; 0 when done or stopped cleanly."""
    interrupt = interrupt or Interrupt()
    proc = start_process(settings)
    try:
        loop = prepare(settings, proc)
        if loop is None:
            return 0
        finished = loop.run(interrupt)
        if not finished:  # interrupted: the state was saved at the step it stopped
            if proc.rank == 0:
                print(f"stopped at step {loop.progress.step}; rerun the same command to continue", file=sys.stderr)
            return 0
        if proc.rank == 0:
            finish_run(
                loop.model,
                loop.task,
                loop.files,
                loop.settings,
                loop.progress,
                fingerprint(loop.run_id),
                proc.device,
                loop.hardware,
                command_line(settings),
            )
            loop.progress.finished = True
        proc.barrier()
        loop.save()
        return 0
    finally:
        if proc.distributed:
            dist.destroy_process_group()
