"""Scoring a model during and after training: the copy task, validation loss, sacreBLEU on
val and test, the choice between the best and the averaged checkpoint, and the curves."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

import data
from model import Transformer, TransformerConfig
from model.transformer import load_weights
from tokenizer import BOS_ID, EOS_ID, PAD_ID

if TYPE_CHECKING:
    from training import RunState

COPY_MIN_LEN, COPY_MAX_LEN = 4, 12

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
    pairs = run.val_pairs
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

    from training import read_jsonl

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_jsonl(metrics_path)
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
