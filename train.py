"""Train the German -> English Transformer (or the copy task), evaluate it, save it, push it.

    python train.py --data-dir ../shared/data/multi30k --output checkpoints/de-en
    python train.py --task copy --output runs/copy --max-steps 400
    torchrun --nproc_per_node=2 train.py ...      # DistributedDataParallel, one shard each

The run is resumable: rerunning the same command continues from the training state in
--work-dir (written atomically every --save-every steps, and on Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shlex
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from evaluation import evaluate_copy, evaluate_translation, plot_curves
from model import Transformer
from training import RunState, TrainSettings, load_state, save_state


def parse_args(argv: list[str] | None = None) -> TrainSettings:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    d = TrainSettings()
    p.add_argument("--task", choices=["translate", "copy"], default=d.task)
    p.add_argument("--data-dir", default=None, help="Multi30k folder (default: $MULTI30K_DIR, else download)")
    p.add_argument("--output", required=True, help="checkpoint folder: config.json, model.safetensors, ...")
    p.add_argument("--work-dir", default=None, help="training state and intermediate checkpoints (default: runs/<output name>)")
    p.add_argument("--vocab-size", type=int, default=d.vocab_size)
    p.add_argument("--d-model", type=int, default=d.d_model)
    p.add_argument("--n-heads", type=int, default=d.n_heads)
    p.add_argument("--n-layers", type=int, default=d.n_layers, help="encoder and decoder layers each")
    p.add_argument("--d-ff", type=int, default=d.d_ff)
    p.add_argument("--dropout", type=float, default=d.dropout)
    p.add_argument("--max-len", type=int, default=d.max_len)
    p.add_argument("--norm-first", action="store_true", help="Pre-LN instead of the paper's Post-LN")
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many optimizer steps")
    p.add_argument("--epochs", type=int, default=None, help="stop after this many passes over the data")
    p.add_argument("--batch-tokens", type=int, default=d.batch_tokens)
    p.add_argument("--lr", type=float, default=d.lr, help="peak learning rate, reached at the end of warmup")
    p.add_argument("--warmup", type=int, default=d.warmup)
    p.add_argument("--label-smoothing", type=float, default=d.label_smoothing)
    p.add_argument("--clip", type=float, default=d.clip, help="gradient norm clipping")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--eval-every", type=int, default=d.eval_every)
    p.add_argument("--save-every", type=int, default=d.save_every)
    p.add_argument("--average-last", type=int, default=d.average_last, help="average the last N evaluated checkpoints")
    p.add_argument("--num-beams", type=int, default=d.num_beams)
    p.add_argument("--length-penalties", default=d.length_penalties, help="comma-separated values tried on val")
    p.add_argument("--max-train-pairs", type=int, default=None, help="use only the first N training pairs")
    p.add_argument("--max-eval-sentences", type=int, default=None, help="evaluate on the first N sentences only")
    p.add_argument("--precision", choices=["auto", "fp32", "bf16"], default=d.precision,
                   help="bf16 autocast (auto: on CUDA only; CPUs with AMX gain from it too)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads per process")
    p.add_argument("--push-to-hub", default=None, metavar="USER/NAME")
    p.add_argument("--hub-branch", default=None)
    p.add_argument("--push-every", type=int, default=None, help="also push every N steps to branch step-N")
    args = p.parse_args(argv)
    settings = TrainSettings(**vars(args), argv=list(sys.argv[1:] if argv is None else argv))
    try:
        settings.validate()
    except ValueError as err:
        p.error(str(err))
    return settings


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


def lr_at(step: int, peak: float, warmup: int) -> float:
    """Linear warmup to `peak`, then decay with the inverse square root of the step (the paper's schedule)."""
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


def main(argv: list[str] | None = None) -> int:
    interrupt = Interrupt()
    try:
        return train(parse_args(argv), interrupt)
    finally:
        interrupt.restore()


def train(settings: TrainSettings, interrupt: Interrupt) -> int:
    distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    device = torch.device(f"cuda:{os.environ.get('LOCAL_RANK', 0)}" if torch.cuda.is_available() else "cpu")
    if distributed:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    if settings.threads:
        torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed + rank)

    run = RunState.prepare(settings, rank=rank, world=world)  # data, tokenizer, model config
    model = Transformer(run.config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr, betas=(0.9, 0.98), eps=1e-9)
    state_path = run.work_dir / "state.safetensors"
    progress = load_state(state_path, model, optimizer, settings) if state_path.exists() else None
    run.restore(progress)
    if progress is not None and rank == 0:
        print(f"resuming from step {run.step} (epoch {run.epoch}, batch {run.position})", file=sys.stderr)
    ddp_model = torch.nn.parallel.DistributedDataParallel(model) if distributed else model

    pad = run.config.pad_id
    use_bf16 = settings.precision == "bf16" or (settings.precision == "auto" and device.type == "cuda")
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16)
    last_tick, tokens_seen, window_start = time.time(), 0, time.time()

    from tqdm import tqdm

    bar = tqdm(total=run.total_steps(), initial=run.step, disable=rank != 0, dynamic_ncols=True, unit="step",
               mininterval=0.5 if sys.stderr.isatty() else 30)
    finished = run.step >= run.total_steps()
    while not finished and not interrupt.requested:
        for batch in run.batches(device):
            model.train()
            lr = lr_at(run.step + 1, settings.lr, settings.warmup)
            for group in optimizer.param_groups:
                group["lr"] = lr
            with autocast:
                logits = ddp_model(batch.src, batch.tgt_in)  # (B, T, V)
            loss = F.cross_entropy(
                logits.float().view(-1, logits.size(-1)),
                batch.tgt_out.view(-1),
                ignore_index=pad,
                label_smoothing=settings.label_smoothing,
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings.clip)
            optimizer.step()
            run.advance()
            tokens_seen += batch.n_tokens * world
            now = time.time()
            run.wall_time += now - last_tick  # training time so far, saved with the state
            last_tick = now

            if rank == 0:
                elapsed = time.time() - window_start
                bar.update(1)
                bar.set_postfix(refresh=False, loss=f"{loss.item():.3f}", lr=f"{lr:.2e}", tok_s=f"{tokens_seen / max(elapsed, 1e-9):,.0f}")
                if run.step % 50 == 0:
                    run.log(step=run.step, epoch=run.epoch, loss=round(loss.item(), 4), lr=lr,
                            tokens_per_s=round(tokens_seen / max(elapsed, 1e-9), 1))
                    tokens_seen, window_start = 0, time.time()

            done = run.step >= run.total_steps()
            stop = done or interrupt.requested
            if run.step % settings.eval_every == 0 or done:
                if rank == 0:
                    metrics = evaluate_copy(model, run) if settings.task == "copy" else evaluate_translation(model, run, device)
                    run.record_eval(model, metrics)
                    bar.write(f"step {run.step}: " + ", ".join(f"{k} {v:.4g}" for k, v in metrics.items()))
                    plot_curves(run.metrics_path, run.work_dir / "curves.png")
            if run.step % settings.save_every == 0 or stop:
                if rank == 0:
                    save_state(state_path, model, optimizer, run)
            if settings.push_every and run.step % settings.push_every == 0 and rank == 0:
                run.push(model, branch=f"step-{run.step}")
            if distributed:
                dist.barrier()
            if stop:
                break
        finished = run.step >= run.total_steps()
    bar.close()

    if interrupt.requested and not finished:
        if rank == 0:
            save_state(state_path, model, optimizer, run)
            print(f"stopped at step {run.step}; rerun the same command to continue", file=sys.stderr)
        return 0
    if rank == 0:
        run.finish(model, device, command=" ".join(shlex.quote(a) for a in ["train.py", *settings.argv]),
                   hardware=describe_hardware(device, world, use_bf16))
        save_state(state_path, model, optimizer, run)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    return 0


def describe_hardware(device: torch.device, world: int, bf16: bool) -> str:
    precision = "bf16 autocast" if bf16 else "fp32"
    if device.type == "cuda":
        return f"{world} x {torch.cuda.get_device_name(device)}, {precision}"
    return f"{world} process(es) on {os.cpu_count()} CPU core(s) ({platform.machine()}, no GPU), {precision}"


if __name__ == "__main__":
    sys.exit(main())
