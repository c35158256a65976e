"""The parts of train.py that are not the loop: settings, data and progress of a run, its saved
state, evaluation, checkpoint averaging and the curves."""

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
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file, save_file, save_model

import data
from model import ConfigError, Transformer, TransformerConfig
from model.transformer import load_weights
from tokenizer import BOS_ID, EOS_ID, PAD_ID, load_tokenizer, train_tokenizer

# Model sizes when a flag is not given: the demo's model for translation, a toy for the copy task.
TASK_DEFAULTS = {
    "translate": dict(vocab_size=8000, d_model=256, n_heads=4, n_layers=3, d_ff=1024, dropout=0.1,
                      batch_tokens=4096, lr=1e-3, warmup=1000, eval_every=500, epochs=30),
    "copy": dict(vocab_size=24, d_model=64, n_heads=4, n_layers=2, d_ff=128, dropout=0.0,
                 batch_tokens=1024, lr=3e-3, warmup=100, eval_every=100, epochs=None),
}
COPY_STEPS_PER_EPOCH = 100
COPY_MIN_LEN, COPY_MAX_LEN = 4, 12


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
        return cls(settings, rank, world, work_dir, output, config, tokenizer, pairs, val, test)

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
    rates = [r["tokens_per_s"] for r in _read_jsonl(path) if "tokens_per_s" in r]
    return sum(rates) / len(rates) if rates else 0.0


def _read_jsonl(path: Path) -> list[dict]:
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


def average_checkpoints(model: Transformer, paths: list[Path]) -> None:
    """Load the element-wise mean of several checkpoints' weights into model."""
    total = None
    for path in paths:
        weights = load_file(str(path))
        if total is None:
            total = {k: v.double() for k, v in weights.items()}
        else:
            for k, v in weights.items():
                total[k] += v.double()
    model.load_state_dict({k: (v / len(paths)).float() for k, v in total.items()}, strict=False)


# ----- evaluation -----------------------------------------------------------------------------


def copy_task_batch(config: TransformerConfig, batch_tokens: int, seed: int, rank: int = 0) -> data.Batch:
    """Random sequences of ordinary tokens; the target is the source itself."""
    gen = torch.Generator().manual_seed(seed * 31 + rank)
    n = batch_tokens // (COPY_MAX_LEN + 2)
    pairs = []
    for _ in range(n):
        length = int(torch.randint(COPY_MIN_LEN, COPY_MAX_LEN + 1, (1,), generator=gen))
        seq = torch.randint(4, config.vocab_size, (length,), generator=gen).tolist()
        pairs.append((seq + [EOS_ID], [BOS_ID] + seq + [EOS_ID]))
    return data.collate(pairs, list(range(n)), PAD_ID)


@torch.inference_mode()
def evaluate_copy(model: Transformer, run: RunState, n: int = 256) -> dict:
    """Share of held-out random sequences that greedy decoding copies exactly."""
    model.eval()
    batch = copy_task_batch(run.config, n * (COPY_MAX_LEN + 2), seed=-1 - run.settings.seed)  # never a training seed
    out = model.generate(batch.src.to(next(model.parameters()).device), max_new_tokens=COPY_MAX_LEN + 2)
    correct = 0
    for row in range(batch.src.size(0)):
        want = [t for t in batch.tgt_out[row].tolist() if t != PAD_ID]
        got = [t for t in out[row].tolist() if t != PAD_ID]
        correct += want == got
    return {"copy_accuracy": correct / batch.src.size(0)}


def bleu_chrf(hypotheses: list[str], references: list[str]) -> dict:
    """sacreBLEU: cased detokenized BLEU and chrF (with signatures), and lowercased BLEU."""
    from sacrebleu.metrics import BLEU, CHRF

    bleu, chrf, bleu_lc = BLEU(), CHRF(), BLEU(lowercase=True)
    return {
        "bleu": bleu.corpus_score(hypotheses, [references]).score,
        "chrf": chrf.corpus_score(hypotheses, [references]).score,
        "bleu_lowercase": bleu_lc.corpus_score(hypotheses, [references]).score,
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
    }


@torch.inference_mode()
def validation_loss(model: Transformer, run: RunState, device) -> float:
    pairs, _ = data.encode_pairs(run.tokenizer, run.val, run.settings.max_len)
    total, count = 0.0, 0
    for indices in data.token_batches(pairs, run.settings.batch_tokens, seed=0, epoch=0, shuffle=False):
        batch = data.collate(pairs, indices, PAD_ID).to(device)
        logits = model(batch.src, batch.tgt_in)
        total += F.cross_entropy(logits.float().view(-1, logits.size(-1)), batch.tgt_out.view(-1),
                                 ignore_index=PAD_ID, reduction="sum").item()
        count += batch.n_tokens
    return total / max(count, 1)


def evaluate_translation(model: Transformer, run: RunState, device) -> dict:
    """Validation loss and greedy BLEU: cheap enough to run often."""
    from model import Translator

    model.eval()
    translator = Translator(model, run.tokenizer, device=device)
    hyps = translator.translate(run.val.src, num_beams=1)
    scores = bleu_chrf(hyps, run.val.tgt)
    return {"val_loss": validation_loss(model, run, device), "val_bleu": scores["bleu"]}


def choose_weights(model: Transformer, run: RunState, device) -> str:
    """The best single checkpoint or the average of the last ones, whichever scores higher on val."""
    candidates = {}
    best = run.work_dir / "best.safetensors"
    if best.exists():
        load_weights(model, best)
        candidates["best"] = evaluate_translation(model, run, device)["val_bleu"]
    paths = [run.work_dir / f"ckpt-{s}.safetensors" for s in run.saved_steps]
    paths = [p for p in paths if p.exists()]
    if len(paths) > 1:
        average_checkpoints(model, paths)
        candidates["average"] = evaluate_translation(model, run, device)["val_bleu"]
    if not candidates:
        return "last"
    choice = max(candidates, key=candidates.get)
    print(f"val BLEU (greedy): {candidates}; keeping {choice}", file=sys.stderr)
    if choice == "best" and "average" in candidates:
        load_weights(model, best)  # the model holds the average, evaluated last
    return choice


def final_evaluation(translator, run: RunState) -> dict:
    """Tune the length penalty on val with beam search, then score test once."""
    beams = run.settings.num_beams
    val_scores = {}
    for penalty in run.settings.penalties():
        hyps = translator.translate(run.val.src, num_beams=beams, length_penalty=penalty)
        val_scores[penalty] = bleu_chrf(hyps, run.val.tgt)
    penalty = max(val_scores, key=lambda p: val_scores[p]["bleu"])
    hyps = translator.translate(run.test.src, num_beams=beams, length_penalty=penalty)
    test = bleu_chrf(hyps, run.test.tgt)
    (run.output / "test_hypotheses.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    return {"val": val_scores[penalty], "test": test,
            "decoding": {"num_beams": beams, "length_penalty": penalty,
                         "val_bleu_by_length_penalty": {str(p): round(s["bleu"], 2) for p, s in val_scores.items()}}}


def plot_curves(metrics_path: Path, png_path: Path) -> None:
    """Training loss and validation BLEU (or copy accuracy) against steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = _read_jsonl(metrics_path)
    train = [(r["step"], r["loss"]) for r in records if "loss" in r]
    val = [(r["step"], r.get("val_bleu", r.get("copy_accuracy"))) for r in records
           if "val_bleu" in r or "copy_accuracy" in r]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
    if train:
        ax1.plot(*zip(*train))
    ax1.set(xlabel="step", ylabel="training loss (label-smoothed)", title="Loss")
    if val:
        ax2.plot(*zip(*val), marker="o")
    ax2.set(xlabel="step", ylabel="validation BLEU" if any("val_bleu" in r for r in records) else "copy accuracy",
            title="Validation")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
