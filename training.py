"""The parts of train.py that are not the loop: settings, the data and progress of a run, and its
saved state. Scoring lives in evaluation.py."""

from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file, save_model

import data
from evaluation import choose_weights, copy_task_batch, evaluate_copy, final_evaluation
from model import ConfigError, Transformer, TransformerConfig
from tokenizer import BOS_ID, EOS_ID, PAD_ID, load_tokenizer, train_tokenizer

# Model sizes when a flag is not given: the demo's model for translation, a toy for the copy task.
TASK_DEFAULTS = {
    "translate": dict(vocab_size=8000, d_model=256, n_heads=4, n_layers=3, d_ff=1024, dropout=0.1,
                      batch_tokens=4096, lr=1e-3, warmup=1000, eval_every=500, epochs=30),
    "copy": dict(vocab_size=24, d_model=64, n_heads=4, n_layers=2, d_ff=128, dropout=0.0,
                 batch_tokens=1024, lr=3e-3, warmup=100, eval_every=100, epochs=None),
}
COPY_STEPS_PER_EPOCH = 100


@dataclass
class TrainSettings:
    """Everything a run depends on; saved with its state so a resume can check it is the same run."""

    output: str = ""
    task: str = "translate"
    data_dir: str | None = None
    work_dir: str | None = None
    vocab_size: int | None = None
    d_model: int | None = None
    n_heads: int | None = None
    n_layers: int | None = None
    d_ff: int | None = None
    dropout: float | None = None
    max_len: int = 256
    norm_first: bool = False
    max_steps: int | None = None
    epochs: int | None = None
    batch_tokens: int | None = None
    lr: float | None = None
    warmup: int | None = None
    label_smoothing: float = 0.1
    clip: float = 1.0
    seed: int = 1234
    eval_every: int | None = None
    save_every: int = 100
    average_last: int = 5
    num_beams: int = 5
    length_penalties: str = "0.6,1.0,1.4"
    max_train_pairs: int | None = None
    max_eval_sentences: int | None = None
    threads: int | None = None
    precision: str = "auto"
    push_to_hub: str | None = None
    hub_branch: str | None = None
    push_every: int | None = None
    argv: list[str] = field(default_factory=list)  # the command line, for the model card

    def validate(self) -> None:
        """Fill task defaults, then reject contradictions."""
        if self.task not in TASK_DEFAULTS:
            raise ValueError(f"unknown task {self.task!r}")
        for name, value in TASK_DEFAULTS[self.task].items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        if self.task == "copy" and (self.data_dir or self.max_train_pairs or self.push_to_hub):
            raise ValueError("--task copy makes its own data: --data-dir, --max-train-pairs and --push-to-hub do not apply")
        if self.max_steps is None and self.epochs is None:
            raise ValueError("give --max-steps or --epochs")
        if self.push_every and not self.push_to_hub:
            raise ValueError("--push-every needs --push-to-hub")
        if self.hub_branch and not self.push_to_hub:
            raise ValueError("--hub-branch needs --push-to-hub")
        for name in ("batch_tokens", "warmup", "eval_every", "save_every", "average_last", "num_beams"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
        if self.batch_tokens < self.max_len:
            raise ValueError(f"--batch-tokens ({self.batch_tokens}) must hold one sentence of --max-len ({self.max_len})")
        self.penalties()  # parses
        try:
            self.model_config(self.vocab_size)
        except ConfigError as err:
            raise ValueError(str(err)) from None

    def penalties(self) -> list[float]:
        try:
            return [float(x) for x in self.length_penalties.split(",")]
        except ValueError:
            raise ValueError(f"--length-penalties must be comma-separated numbers, got {self.length_penalties!r}") from None

    def model_config(self, vocab_size: int) -> TransformerConfig:
        return TransformerConfig(
            vocab_size=vocab_size, d_model=self.d_model, n_heads=self.n_heads, n_encoder_layers=self.n_layers,
            n_decoder_layers=self.n_layers, d_ff=self.d_ff, dropout=self.dropout, max_len=self.max_len,
            pad_id=PAD_ID, bos_id=BOS_ID, eos_id=EOS_ID, norm_first=self.norm_first,
        )

    def identity(self) -> dict:
        """The settings that must not change when a run resumes."""
        keys = ("task", "vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len", "norm_first",
                "batch_tokens", "seed", "max_train_pairs")
        return {k: getattr(self, k) for k in keys}


@dataclass
class RunState:
    """Data, tokenizer and progress of one run (one per process)."""

    settings: TrainSettings
    rank: int
    world: int
    work_dir: Path
    output: Path
    config: TransformerConfig
    tokenizer: object = None
    train_pairs: list = field(default_factory=list)
    val: data.ParallelCorpus | None = None
    test: data.ParallelCorpus | None = None
    val_pairs: list = field(default_factory=list)  # val as ids, encoded once for the validation loss
    step: int = 0
    epoch: int = 0
    position: int = 0
    best_score: float = -math.inf
    wall_time: float = 0.0
    saved_steps: list[int] = field(default_factory=list)

    @property
    def metrics_path(self) -> Path:
        return self.work_dir / "metrics.jsonl"

    @classmethod
    def prepare(cls, settings: TrainSettings, rank: int = 0, world: int = 1) -> "RunState":
        output = Path(settings.output)
        work_dir = Path(settings.work_dir) if settings.work_dir else Path("runs") / output.name
        work_dir.mkdir(parents=True, exist_ok=True)
        if settings.task == "copy":
            config = settings.model_config(settings.vocab_size)
            return cls(settings, rank, world, work_dir, output, config)

        data_dir = data.resolve_data_dir(settings.data_dir)
        train = data.load_split(data_dir, "train")
        if settings.max_train_pairs:
            train = data.ParallelCorpus(train.src[: settings.max_train_pairs], train.tgt[: settings.max_train_pairs])
        val, test = data.load_split(data_dir, "val"), data.load_split(data_dir, "test_2016_flickr")
        if settings.max_eval_sentences:
            n = settings.max_eval_sentences
            val, test = data.ParallelCorpus(val.src[:n], val.tgt[:n]), data.ParallelCorpus(test.src[:n], test.tgt[:n])

        tokenizer_path = work_dir / "tokenizer.json"
        if rank == 0 and not tokenizer_path.exists():
            # Only the training split: val and test stay unseen, even by the vocabulary.
            tokenizer = train_tokenizer(train.src + train.tgt, settings.vocab_size)
            tmp = tokenizer_path.with_suffix(".tmp")
            tokenizer.save(str(tmp))
            os.replace(tmp, tokenizer_path)
        if world > 1:
            torch.distributed.barrier()
        tokenizer = load_tokenizer(tokenizer_path)
        config = settings.model_config(tokenizer.get_vocab_size())
        pairs, dropped = data.encode_pairs(tokenizer, train, settings.max_len)
        if dropped and rank == 0:
            print(f"train: skipped {dropped} pair(s) longer than {settings.max_len} tokens", file=sys.stderr)
        val_pairs, _ = data.encode_pairs(tokenizer, val, settings.max_len)
        return cls(settings, rank, world, work_dir, output, config, tokenizer, pairs, val, test, val_pairs)

    # ----- progress ---------------------------------------------------------------------------

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """This rank's share of an epoch's batches; every rank gets the same number."""
        batches = data.token_batches(self.train_pairs, self.settings.batch_tokens, self.settings.seed, epoch)
        usable = len(batches) - len(batches) % self.world
        return batches[self.rank : usable : self.world]

    def steps_per_epoch(self) -> int:
        if self.settings.task == "copy":
            return COPY_STEPS_PER_EPOCH
        return len(self.epoch_batches(0))

    def total_steps(self) -> int:
        limits = []
        if self.settings.max_steps:
            limits.append(self.settings.max_steps)
        if self.settings.epochs:
            limits.append(self.settings.epochs * self.steps_per_epoch())
        return min(limits)

    def batches(self, device):
        """The rest of the current epoch, from self.position on; then the next epoch starts."""
        if self.settings.task == "copy":
            for position in range(self.position, COPY_STEPS_PER_EPOCH):
                yield copy_task_batch(self.config, self.settings.batch_tokens, seed=self.settings.seed * 7919 + self.step,
                                      rank=self.rank).to(device)
        else:
            batches = self.epoch_batches(self.epoch)
            for _, batch in data.iterate_batches(self.train_pairs, batches, self.position, PAD_ID):
                yield batch.to(device)
        self.epoch += 1
        self.position = 0

    def advance(self) -> None:
        self.step += 1
        self.position += 1

    def restore(self, progress: dict | None) -> None:
        if progress:
            for key in ("step", "epoch", "position", "best_score", "wall_time", "saved_steps"):
                setattr(self, key, progress[key])
            # No position past the end of an epoch: the generator then starts the next one.

    def log(self, **record) -> None:
        record["time"] = round(time.time(), 1)
        with open(self.metrics_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def record_eval(self, model: Transformer, metrics: dict) -> None:
        """Log metrics, keep this checkpoint for averaging, and keep it as best if it is."""
        self.log(step=self.step, epoch=self.epoch, **metrics)
        save_model(model, str(self.work_dir / f"ckpt-{self.step}.safetensors"))
        self.saved_steps = [s for s in self.saved_steps if s != self.step] + [self.step]
        while len(self.saved_steps) > self.settings.average_last:
            (self.work_dir / f"ckpt-{self.saved_steps.pop(0)}.safetensors").unlink(missing_ok=True)
        score = metrics.get("val_bleu", metrics.get("copy_accuracy", 0.0))
        if score > self.best_score:
            self.best_score = score
            save_model(model, str(self.work_dir / "best.safetensors"))

    # ----- the end of a run -----------------------------------------------------------------------

    def finish(self, model: Transformer, device, command: str, hardware: str) -> dict:
        """Pick the final weights, evaluate them on test, write the output folder (and push)."""
        model.eval()
        training = dict(command=command, hardware=hardware, steps=self.step, epochs=round(self.step / self.steps_per_epoch(), 2),
                        wall_time_s=round(self.wall_time, 1), tokens_per_s=_mean_tokens_per_s(self.metrics_path))
        self.output.mkdir(parents=True, exist_ok=True)
        if self.settings.task == "copy":
            results = {"copy_accuracy": evaluate_copy(model, self)["copy_accuracy"]}
            model.save_pretrained(self.output)
            (self.output / "results.json").write_text(json.dumps({"results": results, "training": training}, indent=2))
            return results
        from model import Translator

        choice = choose_weights(model, self, device)
        training["averaged"] = choice == "average"
        translator = Translator(model, self.tokenizer, device=device)
        results = final_evaluation(translator, self)
        info = {"results": results, "training": training}
        translator.save_pretrained(self.output, card_info=info)
        (self.output / "results.json").write_text(json.dumps(info, indent=2))
        for name in ("metrics.jsonl", "curves.png"):
            if (self.work_dir / name).exists():
                (self.output / name).write_bytes((self.work_dir / name).read_bytes())
        print(json.dumps(results, indent=2))
        if self.settings.push_to_hub:
            url = translator.push_to_hub(self.settings.push_to_hub, branch=self.settings.hub_branch,
                                         commit_message=f"Train {self.step} steps: test BLEU {results['test']['bleu']:.2f}",
                                         card_info=info)
            print(f"pushed to {url}")
        return info

    def push(self, model: Transformer, branch: str) -> None:
        from model import Translator

        Translator(model, self.tokenizer).push_to_hub(self.settings.push_to_hub, branch=branch,
                                                      commit_message=f"Checkpoint at step {self.step}")


def _mean_tokens_per_s(path: Path) -> float:
    rates = [r["tokens_per_s"] for r in read_jsonl(path) if "tokens_per_s" in r]
    return sum(rates) / len(rates) if rates else 0.0


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ----- saved training state -------------------------------------------------------------------


def save_state(path: Path, model: Transformer, optimizer: torch.optim.Optimizer, run: RunState) -> None:
    """Model, optimizer, progress and RNG in one safetensors file, replaced atomically."""
    tensors = {f"model.{k}": v.detach().cpu().clone().contiguous() for k, v in model.state_dict().items()}
    opt = optimizer.state_dict()
    for index, param_state in opt["state"].items():
        for key, value in param_state.items():
            tensors[f"optim.{index}.{key}"] = torch.as_tensor(value).detach().cpu().clone().contiguous()
    tensors["rng.torch"] = torch.get_rng_state()
    meta = {
        "settings": run.settings.identity(),
        "progress": dict(step=run.step, epoch=run.epoch, position=run.position, best_score=run.best_score,
                         wall_time=run.wall_time, saved_steps=run.saved_steps),
        "param_groups": opt["param_groups"],
        "python_random": repr(random.getstate()),
    }
    tmp = path.with_suffix(".tmp")
    save_file(tensors, str(tmp), metadata={"state": json.dumps(meta)})
    os.replace(tmp, path)  # a kill between the two leaves the previous state whole


def load_state(path: Path, model: Transformer, optimizer: torch.optim.Optimizer, settings: TrainSettings) -> dict:
    """Restore what save_state wrote; refuse a state written by a run with other settings."""
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads(f.metadata()["state"])
        tensors = load_file(str(path))
    except Exception as err:
        raise SystemExit(f"cannot read the training state {path} ({err}); delete it to start over") from None
    if meta["settings"] != settings.identity():
        changed = {k: (v, settings.identity()[k]) for k, v in meta["settings"].items() if settings.identity().get(k) != v}
        raise SystemExit(f"{path} belongs to a run with other settings {changed}; use another --work-dir or the same flags")
    model.load_state_dict({k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")})
    opt_state: dict = {}
    for name, value in tensors.items():
        if name.startswith("optim."):
            _, index, key = name.split(".", 2)
            opt_state.setdefault(int(index), {})[key] = value
    optimizer.load_state_dict({"state": opt_state, "param_groups": meta["param_groups"]})
    torch.set_rng_state(tensors["rng.torch"])
    return meta["progress"]
