"""Attention arrays + token strings -> the compact data the page draws, and word alignments.
No torch, no Gradio.

Maps are numpy arrays (L layers, H heads, rows, cols); rows are the queries (the token that
attends), columns the keys (the tokens attended to).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np

KINDS = {
    "encoder": "Encoder self-attention (source → source)",
    "decoder": "Decoder self-attention (target → earlier target)",
    "cross": "Cross-attention (target → source)",
}


def select_map(maps: np.ndarray, layer: int, head: int | None) -> np.ndarray:
    """One (rows, cols) map: a head of a layer, or the mean over the layer's heads (head=None)."""
    if not 0 <= layer < maps.shape[0]:
        raise ValueError(f"layer {layer} out of range: the model has {maps.shape[0]} layers")
    if head is None:
        return maps[layer].mean(axis=0)
    if not 0 <= head < maps.shape[1]:
        raise ValueError(f"head {head} out of range: the model has {maps.shape[1]} heads")
    return maps[layer, head]


def axis_labels(kind: str, source_tokens: list[str], target_tokens: list[str],
                decoder_input_tokens: list[str]) -> tuple[list[str], list[str]]:
    """(column labels, row labels) of a map of this kind."""
    if kind == "encoder":
        return source_tokens, source_tokens
    if kind == "decoder":
        return decoder_input_tokens, target_tokens
    if kind == "cross":
        return source_tokens, target_tokens
    raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")


# ----- word alignment -----------------------------------------------------------------------

SPECIAL = {"<s>", "</s>", "<pad>", "<unk>"}


def merge_subwords(tokens: list[str]) -> list[tuple[str, list[int]]]:
    """Group subword positions into words: a token that starts with '▁' starts a new word, and
    punctuation stands alone. Special tokens are left out. Returns (word, token positions)."""
    words: list[tuple[str, list[int]]] = []
    previous_was_punct = False
    for i, token in enumerate(tokens):
        if token in SPECIAL:
            previous_was_punct = True
            continue
        text = token.replace("▁", " ")
        is_punct = text.strip() != "" and all(not c.isalnum() for c in text.strip())
        starts_word = not words or token.startswith("▁") or is_punct or previous_was_punct
        if starts_word:
            words.append((text.strip(), [i]))
        else:
            words[-1] = (words[-1][0] + text, words[-1][1] + [i])
        previous_was_punct = is_punct
    return [(w, idx) for w, idx in words if w]


@dataclass
class Alignment:
    source_words: list[str]
    target_words: list[str]
    weights: np.ndarray  # (target words, source words): attention mass on each source word
    links: list[tuple[str, str, float]]  # each target word, its most attended source word, that mass


def word_alignment(cross: np.ndarray, source_tokens: list[str], target_tokens: list[str]) -> Alignment:
    """From one cross-attention map (T, S): the mass each target word puts on each source word
    (summed over the source word's subwords, averaged over the target word's)."""
    src_words, tgt_words = merge_subwords(source_tokens), merge_subwords(target_tokens)
    weights = np.zeros((len(tgt_words), len(src_words)), dtype=np.float32)
    for t, (_, t_idx) in enumerate(tgt_words):
        for s, (_, s_idx) in enumerate(src_words):
            weights[t, s] = cross[np.ix_(t_idx, s_idx)].sum(axis=1).mean()
    links = []
    for t, (word, _) in enumerate(tgt_words):
        if len(src_words):
            best = int(weights[t].argmax())
            links.append((word, src_words[best][0], float(weights[t, best])))
    return Alignment([w for w, _ in src_words], [w for w, _ in tgt_words], weights, links)


# ----- what the browser draws ---------------------------------------------------------------

LEVELS = 255  # a weight is sent as one byte: steps of 1/255 = 0.004, finer than the eye sees in a colour


def quantize(maps: np.ndarray) -> str:
    """(L, H, rows, cols) weights in [0, 1] -> base64 of one byte each, row-major, round to nearest."""
    levels = np.rint(np.clip(np.nan_to_num(maps, nan=0.0), 0.0, 1.0) * LEVELS).astype(np.uint8)
    return base64.b64encode(levels.tobytes()).decode("ascii")


def dequantize(text: str, shape: tuple[int, ...]) -> np.ndarray:
    """quantize's inverse (to within 1/510 of each weight)."""
    return np.frombuffer(base64.b64decode(text), dtype=np.uint8).reshape(shape).astype(np.float32) / LEVELS


def sentence_payload(source: str, explanation, words: dict[str, list], mean_log_prob: float,
                     unfamiliar: bool, report: dict | None = None) -> dict:
    """One sentence for the page: tokens, words, per-token probabilities and every map in bytes.

    `explanation` has the fields of model.translator.Explanation; `words` maps "src", "tgt", "in"
    to [(word, [piece positions])] of source, target and decoder-input tokens; `report` (lens.alarm's
    Familiarity.report) adds the training-data evidence and the alarm's reasons.
    """
    report = report or {"evidence": [], "unfamiliar": unfamiliar, "reasons": []}
    return {
        "source": source,
        "translation": explanation.translation,
        "truncated": bool(explanation.truncated),
        "tokens": {"src": explanation.source_tokens, "tgt": explanation.target_tokens,
                   "in": explanation.decoder_input_tokens},
        "words": {axis: [[text, list(span)] for text, span in groups] for axis, groups in words.items()},
        "probs": [round(float(p), 3) for p in explanation.target_probs],
        "mean_log_prob": round(float(mean_log_prob), 3),
        "unfamiliar": bool(report["unfamiliar"]),
        "reasons": report["reasons"],
        "evidence": report["evidence"],
        "maps": {kind: quantize(getattr(explanation, kind)) for kind in KINDS},
    }
