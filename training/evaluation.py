"""Scoring a model: sacreBLEU and chrF, validation loss, greedy BLEU during training, the choice
between candidate weights, and the final beam-search evaluation. Plain arguments in, numbers out;
nothing here writes a file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from sacrebleu.metrics import BLEU, CHRF
from tqdm import tqdm

import data
from model import Transformer
from translation import Translator

CHUNK = 128  # sentences per progress-bar tick


def bleu_chrf(hypotheses: list[str], references: list[str]) -> dict:
    """sacreBLEU: cased detokenized BLEU and chrF (with signatures), and lowercased BLEU."""
    bleu, chrf, bleu_lc = BLEU(), CHRF(), BLEU(lowercase=True)
    return {
        "bleu": bleu.corpus_score(hypotheses, [references]).score,
        "chrf": chrf.corpus_score(hypotheses, [references]).score,
        "bleu_lowercase": bleu_lc.corpus_score(hypotheses, [references]).score,
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
    }


def translate_all(
    translator: Translator,
    sentences: Sequence[str],
    desc: str,
    num_beams: int = 1,
    length_penalty: float = 1.0,
    progress: bool = True,
) -> list[str]:
    """Translate many sentences in length-sorted chunks, with a progress bar on stderr."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    out = [""] * len(sentences)
    chunks = [order[i : i + CHUNK] for i in range(0, len(order), CHUNK)]
    bar = tqdm(
        total=len(sentences),
        desc=desc,
        unit="sent",
        disable=not progress or len(chunks) < 2,
        leave=False,
        file=sys.stderr,
        mininterval=1.0,
    )
    for chunk in chunks:
        hyps = translator.translate([sentences[i] for i in chunk], num_beams=num_beams, length_penalty=length_penalty)
        for i, hyp in zip(chunk, hyps):
            out[i] = hyp
        bar.update(len(chunk))
    bar.close()
    return out


@torch.inference_mode()
def validation_loss(model: Transformer, pairs: list, batch_tokens: int, device: torch.device | str) -> float:
    """Mean cross-entropy per target token (no label smoothing) over encoded pairs."""
    pad = model.config.pad_id
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for indices in data.token_batches(pairs, batch_tokens, seed=0, epoch=0, shuffle=False):
        batch = data.collate(pairs, indices, pad).to(device)
        logits = model(batch.src, batch.tgt_in)  # (B, T, V)
        total += F.cross_entropy(
            logits.float().view(-1, logits.size(-1)), batch.tgt_out.view(-1), ignore_index=pad, reduction="sum"
        ).item()
        count += batch.n_tokens
    model.train(was_training)
    return total / max(count, 1)


def evaluate_translation(
    model: Transformer,
    tokenizer,
    val: data.ParallelCorpus,
    val_pairs: list,
    batch_tokens: int,
    device: torch.device | str,
) -> dict:
    """Validation loss and greedy BLEU: cheap enough to run often."""
    was_training = model.training
    translator = Translator(model, tokenizer, device=device)  # puts the model in eval mode
    hyps = translate_all(translator, val.src, desc="val (greedy)")
    model.train(was_training)
    return {
        "val_loss": validation_loss(model, val_pairs, batch_tokens, device),
        "val_bleu": bleu_chrf(hyps, val.tgt)["bleu"],
    }


def greedy_bleu(model: Transformer, tokenizer, corpus: data.ParallelCorpus, device: torch.device | str) -> float:
    """Greedy BLEU of `model` on a corpus (the everyday dev set during training)."""
    was_training = model.training
    hyps = translate_all(Translator(model, tokenizer, device=device), corpus.src, desc="everyday dev (greedy)")
    model.train(was_training)
    return bleu_chrf(hyps, corpus.tgt)["bleu"]


def score_everyday(
    translator: Translator, dev: data.ParallelCorpus, test: data.ParallelCorpus | None, num_beams: int, penalty: float
) -> tuple[dict, list[str]]:
    """The everyday dev set (and test, unless None) scored with the decoding chosen on Multi30k val."""
    results = {}
    for name, corpus in (("everyday_dev", dev), ("everyday_test", test)):
        if corpus is None:
            continue
        hyps = translate_all(
            translator,
            corpus.src,
            desc=f"{name} (beam {num_beams}, lp {penalty})",
            num_beams=num_beams,
            length_penalty=penalty,
        )
        results[name] = bleu_chrf(hyps, corpus.tgt)
    return results, hyps if test is not None else []


def choose_weights(
    model: Transformer, candidates: dict[str, dict[str, torch.Tensor]], score: Callable[[Transformer], float]
) -> tuple[str, dict[str, float]]:
    """Score each candidate's weights with `score(model)`; leave the model holding the winner.

    With no candidates the model keeps its own weights ("last").
    """
    if not candidates:
        return "last", {}
    scores = {}
    for name, weights in candidates.items():
        model.load_state_dict(weights, strict=True)
        scores[name] = score(model)
    choice = max(scores, key=scores.get)
    model.load_state_dict(candidates[choice], strict=True)
    return choice, scores


def final_evaluation(
    translator: Translator,
    val: data.ParallelCorpus,
    test: data.ParallelCorpus | None,
    num_beams: int,
    penalties: list[float],
) -> tuple[dict, list[str]]:
    """Tune the length penalty on val with beam search, then score test once (test None: val only).

    Returns the results and the test hypotheses.
    """
    val_scores = {}
    for penalty in penalties:
        hyps = translate_all(
            translator,
            val.src,
            desc=f"val (beam {num_beams}, lp {penalty})",
            num_beams=num_beams,
            length_penalty=penalty,
        )
        val_scores[penalty] = bleu_chrf(hyps, val.tgt)
    penalty = max(val_scores, key=lambda p: val_scores[p]["bleu"])
    results = {
        "val": val_scores[penalty],
        "decoding": {
            "num_beams": num_beams,
            "length_penalty": penalty,
            "val_bleu_by_length_penalty": {str(p): round(s["bleu"], 2) for p, s in val_scores.items()},
        },
    }
    if test is None:
        return results, []
    hyps = translate_all(
        translator, test.src, desc=f"test (beam {num_beams}, lp {penalty})", num_beams=num_beams, length_penalty=penalty
    )
    results["test"] = bleu_chrf(hyps, test.tgt)
    return results, hyps
