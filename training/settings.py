"""TrainSettings: every default of a run, per task, in one place; the CLI is generated from it.

A field whose default depends on the task is None in the dataclass and filled by `validate()`
from its `per_task` metadata; the model's own sizes come from TransformerConfig's defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path

from model import ConfigError, TransformerConfig

TASKS = ("translate", "copy")
CORPORA = ("multi30k", "multi30k+ding", "tatoeba-zh")
PRECISIONS = ("auto", "fp32", "bf16")
_MODEL = TransformerConfig()  # the demo's model: the translation defaults
SNAPSHOT_COUNT = 8  # "auto" snapshots: step 0, then log-spaced up to the last step


def _opt(default, help: str, *, per_task: dict | None = None, choices=None, required: bool = False, cli: bool = True):
    metadata = dict(help=help, per_task=per_task or {}, choices=choices, required=required, cli=cli)
    if isinstance(default, list):
        return field(default_factory=list, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class TrainSettings:
    """Everything a run depends on; recorded with its state and rendered on its model card."""

    output: str = _opt(
        "",
        "checkpoint folder written at the end (config.json, model.safetensors, "
        "tokenizer.json, README.md, results.json, snapshots/)",
        required=True,
    )
    task: str = _opt("translate", "what to learn: Multi30k German->English, or copying random sequences", choices=TASKS)
    data_dir: str | None = _opt(None, "Multi30k folder (default: $MULTI30K_DIR, else download into the cache)")
    corpus: str = _opt(
        "multi30k",
        "training data: Multi30k captions, or captions and the everyday example "
        "sentences of the Ding dictionary (made by python -m corpora.everyday_corpus), or "
        "Tatoeba's Chinese-English pairs (python -m corpora.tatoeba_zh; a Chinese -> English model)",
        choices=CORPORA,
    )
    ding_dir: str | None = _opt(
        None, "Ding folder written by python -m corpora.everyday_corpus (default: $DING_DIR, else runs/corpora/ding)"
    )
    zh_dir: str | None = _opt(
        None,
        "Tatoeba Chinese folder written by python -m corpora.tatoeba_zh (default: $ZH_DIR, else runs/corpora/tatoeba-zh)",
    )
    init_from: str | None = _opt(
        None,
        "start from the weights and tokenizer of this checkpoint folder (fine-tuning; "
        "the model's shape and vocabulary come from it)",
    )
    train_only: str | None = _opt(
        None,
        "train only these weights and keep the rest as --init-from gave them: "
        "'decoder' (the decoder layers; the embedding, which the encoder shares, stays)",
        choices=("decoder",),
    )
    ding_phrases: bool = _opt(False, "also train on the Ding dictionary's multi-word phrase pairs (once an epoch)")
    ding_words: bool = _opt(
        False, "also train on the Ding dictionary's headwords (one German word, its English; once an epoch)"
    )
    ding_repeat: int = _opt(1, "how many times each Ding training pair is seen per epoch (the mixing ratio)")
    distilled_targets: str | None = _opt(
        None,
        "read the English of the Multi30k training pairs from this file, a "
        "teacher's translations, one line per pair (sequence-level distillation: "
        "recipes/distill.py)",
    )
    distilled_ding: str | None = _opt(
        None,
        "read the English of the Ding training sentence pairs from this file, a "
        "teacher's translations, one line per pair (recipes/distill.py --corpus ding)",
    )
    more_corpora: str | None = _opt(
        None,
        "also train on these corpora of python -m corpora.parallel_text, each "
        "with how often a pair is seen per epoch: e.g. games:2,software:1,libreoffice:1",
    )
    corpora_dir: str | None = _opt(
        None, "folder of the corpora of python -m corpora.parallel_text (default: runs/corpora)"
    )
    caption_tag: str | None = _opt(
        None,
        "start the German of every Multi30k pair (training, val and test) with this "
        "tag, e.g. '<CAP>': a domain tag the translator adds for a caption, and leaves off "
        "everyday German (training_data/domain.py tells them apart)",
    )
    reverse: bool = _opt(
        False,
        "learn English -> German (every pair's sides swapped, dev and test too): the reverse "
        "model that back-translates English-only text",
    )
    work_dir: str | None = _opt(
        None,
        "training state, rotation checkpoints, snapshots and metrics "
        "(default: runs/<output name>-<hash of the full output path> in the project)",
    )
    vocab_size: int | None = _opt(
        None,
        "BPE vocabulary size (copy: symbols incl. 4 specials)",
        per_task={"translate": _MODEL.vocab_size, "copy": 24},
    )
    d_model: int | None = _opt(None, "model width", per_task={"translate": _MODEL.d_model, "copy": 64})
    n_heads: int | None = _opt(None, "attention heads per layer", per_task={"translate": _MODEL.n_heads, "copy": 4})
    n_layers: int | None = _opt(
        None, "encoder and decoder layers each", per_task={"translate": _MODEL.n_encoder_layers, "copy": 2}
    )
    d_ff: int | None = _opt(None, "feed-forward width", per_task={"translate": _MODEL.d_ff, "copy": 128})
    dropout: float | None = _opt(None, "dropout rate", per_task={"translate": _MODEL.dropout, "copy": 0.0})
    max_len: int = _opt(_MODEL.max_len, "longest sentence in tokens; longer training pairs are skipped")
    norm_first: bool = _opt(False, "Pre-LN instead of the paper's Post-LN")
    max_steps: int | None = _opt(None, "stop after this many optimizer steps")
    time_limit: float | None = _opt(
        None,
        "stop training after this many minutes of this invocation, then finish "
        "(evaluate, average, write the output) as if the schedule had ended there",
    )
    epochs: int | None = _opt(None, "stop after this many passes over the data", per_task={"translate": 30})
    batch_tokens: int | None = _opt(
        None, "tokens per batch (longest side x sentences)", per_task={"translate": 4096, "copy": 1024}
    )
    lr: float | None = _opt(
        None, "peak learning rate, reached at the end of warmup", per_task={"translate": 1e-3, "copy": 3e-3}
    )
    warmup: int | None = _opt(
        None, "warmup steps of the inverse-square-root schedule", per_task={"translate": 1000, "copy": 100}
    )
    adam_betas: str = _opt("0.9,0.98", "Adam beta1,beta2 (the paper's)")
    adam_eps: float = _opt(1e-9, "Adam epsilon (the paper's)")
    label_smoothing: float = _opt(0.1, "label smoothing of the loss (the paper's)")
    clip: float = _opt(1.0, "gradient norm clipping")
    seed: int = _opt(1234, "seed of the weights, the batch order and dropout")
    eval_every: int | None = _opt(
        None, "validate (loss, greedy BLEU) every N steps", per_task={"translate": 500, "copy": 100}
    )
    save_every: int = _opt(100, "write the training state every N steps")
    average_last: int = _opt(5, "average the last N evaluated checkpoints (kept if it beats the best on val)")
    num_beams: int = _opt(5, "beam size of the final evaluation")
    length_penalties: str = _opt("0.6,1.0,1.4", "comma-separated length penalties tried on val")
    skip_test: bool = _opt(
        False,
        "score val only at the end: for runs compared with each other, whose chosen "
        "one has its test set scored once, later (same command with --evaluate-again)",
    )
    max_train_pairs: int | None = _opt(None, "use only the first N training pairs")
    max_eval_sentences: int | None = _opt(
        None, "evaluate on the first N val and test sentences only (the card then calls the test score a slice)"
    )
    snapshot_steps: str = _opt(
        "auto",
        f"steps whose weights are kept as fp16 snapshots: 'auto' "
        f"(~{SNAPSHOT_COUNT} log-spaced, step 0 included), 'none', or e.g. 0,100,500",
    )
    threads: int | None = _opt(None, "CPU threads per process (default: torch's choice)")
    precision: str = _opt(
        "auto",
        "fp32 or bf16 autocast; auto picks what the hardware does fast "
        "(CUDA with bf16, or a CPU with avx512_bf16/amx_bf16)",
        choices=PRECISIONS,
    )
    push_to_hub: str | None = _opt(
        None, "Hub repo USER/NAME: main gets the final model, branch step-NNNNN each snapshot"
    )
    hub_branch: str | None = _opt(None, "push the final model to this branch instead of main")
    overwrite: bool = _opt(False, "allow replacing an existing or git-tracked --output folder")
    evaluate_again: bool = _opt(False, "rerun the final evaluation of a finished run (it trains no further)")
    argv: list[str] = _opt([], "the command line, for the model card", cli=False)

    def validate(self) -> TrainSettings:
        """Fill task defaults, then reject contradictions (ValueError naming the flag)."""
        if self.task not in TASKS:
            raise ValueError(f"unknown task {self.task!r}")
        if self.init_from:
            self._shape_from(Path(self.init_from))
        for f in dataclasses.fields(self):
            per_task = f.metadata.get("per_task", {})
            if getattr(self, f.name) is None and self.task in per_task:
                setattr(self, f.name, per_task[self.task])
        if self.task == "copy" and (
            self.data_dir
            or self.max_train_pairs
            or self.push_to_hub
            or self.corpus != "multi30k"
            or self.distilled_targets
        ):
            raise ValueError(
                "--task copy makes its own data: --data-dir, --corpus, --max-train-pairs, "
                "--distilled-targets and --push-to-hub do not apply"
            )
        if self.corpus not in CORPORA:
            raise ValueError(f"--corpus must be one of {', '.join(CORPORA)}")
        for flag in ("ding_phrases", "ding_words", "distilled_ding"):
            if getattr(self, flag) and self.corpus != "multi30k+ding":
                raise ValueError(f"--{flag.replace('_', '-')} needs --corpus multi30k+ding")
        if self.reverse and (
            self.distilled_targets or self.distilled_ding or self.push_to_hub or self.task != "translate"
        ):
            raise ValueError(
                "--reverse trains an English -> German model on human pairs, kept locally: "
                "--distilled-targets, --distilled-ding, --push-to-hub and --task copy do not apply"
            )
        if self.caption_tag is not None and (
            self.corpus != "multi30k+ding"
            or self.reverse
            or not self.caption_tag.strip()
            or self.caption_tag != self.caption_tag.strip()
            or " " in self.caption_tag
        ):
            raise ValueError(
                "--caption-tag is one word without spaces (e.g. '<CAP>') that tells captions from the "
                "everyday text of --corpus multi30k+ding; not with --reverse"
            )
        if self.more_corpora:
            self.more_corpora_repeats()
            if self.corpus != "multi30k+ding":
                raise ValueError("--more-corpora needs --corpus multi30k+ding")
        if self.max_steps is None and self.epochs is None:
            raise ValueError("give --max-steps or --epochs")
        if self.hub_branch and not self.push_to_hub:
            raise ValueError("--hub-branch needs --push-to-hub")
        for name in (
            "batch_tokens",
            "warmup",
            "eval_every",
            "save_every",
            "average_last",
            "num_beams",
            "max_steps",
            "epochs",
            "max_train_pairs",
            "max_eval_sentences",
            "threads",
            "ding_repeat",
        ):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
        if self.time_limit is not None and not (math.isfinite(self.time_limit) and self.time_limit > 0):
            raise ValueError("--time-limit must be a positive number of minutes")
        for name in ("lr", "adam_eps", "clip"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise ValueError(f"--{name.replace('_', '-')} must be a positive number")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError("--label-smoothing must be in [0, 1)")
        if self.batch_tokens < self.max_len:
            raise ValueError(
                f"--batch-tokens ({self.batch_tokens}) must hold one sentence of --max-len ({self.max_len})"
            )
        self.penalties(), self.betas(), self.snapshot_plan(1)  # each parses or raises
        try:
            self.model_config(self.vocab_size)
        except ConfigError as err:
            raise ValueError(str(err)) from None
        return self

    def _shape_from(self, folder: Path) -> None:
        """Take the model's shape from the checkpoint to fine-tune; a flag that contradicts it is refused."""
        if self.task != "translate":
            raise ValueError("--init-from needs --task translate")
        if not (folder / "config.json").is_file() or not (folder / "tokenizer.json").is_file():
            raise ValueError(f"--init-from {folder}: not a translation checkpoint (no config.json and tokenizer.json)")
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ValueError(f"--init-from {folder}: cannot read config.json ({err})") from None
        shape = {
            "vocab_size": config.get("vocab_size"),
            "d_model": config.get("d_model"),
            "n_heads": config.get("n_heads"),
            "n_layers": config.get("n_encoder_layers"),
            "d_ff": config.get("d_ff"),
            "max_len": config.get("max_len"),
            "norm_first": config.get("norm_first"),
        }
        for name, value in shape.items():
            given = getattr(self, name)
            default = next(f.default for f in dataclasses.fields(self) if f.name == name)
            if given not in (None, default, value):
                raise ValueError(f"--{name.replace('_', '-')} {given} contradicts --init-from {folder} ({value})")
            setattr(self, name, value)

    def penalties(self) -> list[float]:
        return _numbers(self.length_penalties, "--length-penalties")

    def betas(self) -> tuple[float, float]:
        betas = _numbers(self.adam_betas, "--adam-betas")
        if len(betas) != 2 or not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"--adam-betas must be two numbers in [0, 1), got {self.adam_betas!r}")
        return betas[0], betas[1]

    def snapshot_plan(self, total_steps: int) -> list[int]:
        """The steps to snapshot, for a run of `total_steps` steps."""
        text = self.snapshot_steps.strip().lower()
        if text == "none":
            return []
        if text == "auto":
            return auto_snapshot_steps(total_steps)
        try:
            steps = sorted({int(x) for x in text.split(",")})
        except ValueError:
            raise ValueError(
                f"--snapshot-steps must be 'auto', 'none' or comma-separated steps, got {self.snapshot_steps!r}"
            ) from None
        if steps and steps[0] < 0:
            raise ValueError("--snapshot-steps must not be negative")
        return [s for s in steps if s <= total_steps]

    def model_config(self, vocab_size: int, pad_id: int = 0, bos_id: int = 1, eos_id: int = 2) -> TransformerConfig:
        return TransformerConfig(
            vocab_size=vocab_size,
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_encoder_layers=self.n_layers,
            n_decoder_layers=self.n_layers,
            d_ff=self.d_ff,
            dropout=self.dropout,
            max_len=self.max_len,
            pad_id=pad_id,
            bos_id=bos_id,
            eos_id=eos_id,
            norm_first=self.norm_first,
        )

    def identity(self) -> dict:
        """The settings that define a run: a resume with any of them changed is another run."""
        keys = (
            "task",
            "vocab_size",
            "d_model",
            "n_heads",
            "n_layers",
            "d_ff",
            "dropout",
            "max_len",
            "norm_first",
            "batch_tokens",
            "lr",
            "warmup",
            "adam_betas",
            "adam_eps",
            "label_smoothing",
            "clip",
            "seed",
            "max_train_pairs",
        )
        if self.corpus != "multi30k":  # recorded only when set, so the states of caption runs keep their identity
            keys += ("corpus", "ding_repeat") + tuple(k for k in ("ding_phrases", "ding_words") if getattr(self, k))
        if self.init_from:
            keys += ("init_from",)
        keys += tuple(
            k
            for k in ("distilled_targets", "distilled_ding", "more_corpora", "caption_tag", "reverse")
            if getattr(self, k)
        )
        return {k: getattr(self, k) for k in keys}

    def more_corpora_repeats(self) -> dict[str, int]:
        """{corpus: repeats per epoch} of --more-corpora (ValueError naming what is wrong)."""
        from corpora.back_translation import NAME as SYNTHETIC
        from corpora.parallel_text import (
            SOURCES as PACKAGED,  # the names only; the modules read no corpus on import
        )

        SOURCES = (*PACKAGED, SYNTHETIC)
        repeats = {}
        for item in (self.more_corpora or "").split(","):
            name, _, count = item.strip().partition(":")
            if name not in SOURCES:
                raise ValueError(f"--more-corpora: unknown corpus {name!r} (known: {', '.join(SOURCES)})")
            if count and not (count.isdigit() and int(count) >= 1):
                raise ValueError(f"--more-corpora: {item.strip()!r} needs a whole number of repeats of at least 1")
            repeats[name] = int(count or 1)
        return repeats

    def recorded(self) -> dict:
        """Every setting as JSON values (for results.json and the model card)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.metadata.get("cli", True)}


def auto_snapshot_steps(total_steps: int, count: int = SNAPSHOT_COUNT) -> list[int]:
    """Step 0 and `count - 1` log-spaced steps from 1 to total_steps (duplicates merged)."""
    if total_steps < 1:
        return [0]
    steps = {0, total_steps}
    for i in range(count - 1):  # 1 = total**0 ... total**1
        steps.add(round(total_steps ** (i / max(count - 2, 1))))
    return sorted(steps)


def fingerprint(values: dict) -> str:
    """A short stable hash of JSON-able values."""
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]


def _numbers(text: str, flag: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"{flag} must be comma-separated numbers, got {text!r}") from None
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"{flag} must be finite numbers, got {text!r}")
    return values


# ----- the command line, generated from the fields ---------------------------------------------


def _help(f: dataclasses.Field) -> str:
    per_task = f.metadata["per_task"]
    if per_task:
        shown = ", ".join(f"{v} for {task}" for task, v in per_task.items())
        missing = [t for t in TASKS if t not in per_task]
        shown += "".join(f", none for {t}" for t in missing)
        return f"{f.metadata['help']} (default: {shown})"
    if f.metadata["required"]:
        return f"{f.metadata['help']} (required)"
    if "default:" in f.metadata["help"]:
        return f.metadata["help"]
    if f.type == "bool" or f.default is False:
        return f"{f.metadata['help']} (default: off)"
    return f"{f.metadata['help']} (default: {'none' if f.default is None else f.default})"


def build_parser(description: str | None = None) -> argparse.ArgumentParser:
    """One flag per TrainSettings field: --snake-case-name, its type, help and default."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    hints = typing.get_type_hints(TrainSettings)
    for f in dataclasses.fields(TrainSettings):
        if not f.metadata.get("cli", True):
            continue
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name]
        if kind is bool:
            parser.add_argument(flag, action="store_true", help=_help(f))
            continue
        base = next(t for t in typing.get_args(kind) or (kind,) if t is not type(None))
        parser.add_argument(
            flag,
            type=base,
            default=None if f.metadata["per_task"] else f.default,
            choices=f.metadata["choices"],
            required=f.metadata["required"],
            metavar=None if f.metadata["choices"] else f.name.upper(),
            help=_help(f),
        )
    return parser


def parse_settings(argv: list[str], description: str | None = None) -> TrainSettings:
    """Settings from a command line; a bad flag exits with argparse's usage message (code 2)."""
    parser = build_parser(description)
    args = parser.parse_args(argv)
    settings = TrainSettings(**vars(args), argv=list(argv))
    try:
        settings.validate()
    except ValueError as err:
        parser.error(str(err))
    return settings
