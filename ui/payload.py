"""One explanation -> what a browser draws: every sentence's tokens, words, probabilities and maps.

The maps travel as one byte per weight (base64), not as nested floats: a sentence of 30 tokens each
way is 10,800 weights, 14 kB instead of ~90 kB of JSON. The page, the step view, the head lab, time
travel and `ui.standalone.show` all draw this one payload with the same viewer (ui/static/).

Maps are numpy arrays (L layers, H heads, rows, cols); rows are the queries (the token that
attends), columns the keys (the tokens attended to).
"""

from __future__ import annotations

import base64
import time

import numpy as np

from lens.explain import TextExplanation, method_name
from model import KINDS
from training_data.alarm import Familiarity
from training_data.confidence import mean_log_prob as mean_log_prob_of

LEVELS = 255  # a weight is sent as one byte: steps of 1/255 = 0.004, finer than the eye sees in a colour


def quantize(maps: np.ndarray) -> str:
    """(L, H, rows, cols) weights in [0, 1] -> base64 of one byte each, row-major, round to nearest."""
    levels = np.rint(np.clip(np.nan_to_num(maps, nan=0.0), 0.0, 1.0) * LEVELS).astype(np.uint8)
    return base64.b64encode(levels.tobytes()).decode("ascii")


def dequantize(text: str, shape: tuple[int, ...]) -> np.ndarray:
    """quantize's inverse (to within 1/510 of each weight)."""
    return np.frombuffer(base64.b64decode(text), dtype=np.uint8).reshape(shape).astype(np.float32) / LEVELS


def sentence_payload(
    source: str, explanation, words: dict[str, list], mean_log_prob: float, unfamiliar: bool, report: dict | None = None
) -> dict:
    """One sentence for the page: tokens, words, per-token probabilities and every map in bytes.

    `explanation` has the fields of translation.translator.Explanation; `words` maps "src", "tgt", "in"
    to [(word, [piece positions])] of source, target and decoder-input tokens; `report` (training_data.alarm's
    Familiarity.report) adds the training-data evidence and the alarm's reasons.
    """
    report = report or {"evidence": [], "unfamiliar": unfamiliar, "reasons": [], "alarms": []}
    return {
        "source": source,
        "translation": explanation.translation,
        "truncated": bool(explanation.truncated),
        "tokens": {
            "src": explanation.source_tokens,
            "tgt": explanation.target_tokens,
            "in": explanation.decoder_input_tokens,
        },
        "words": {axis: [[text, list(span)] for text, span in groups] for axis, groups in words.items()},
        "probs": [round(float(p), 3) for p in explanation.target_probs],
        "mean_log_prob": round(float(mean_log_prob), 3),
        "unfamiliar": bool(report["unfamiliar"]),
        "reasons": report["reasons"],
        "alarms": report.get("alarms", []),
        "evidence": report["evidence"],
        **({"domain": report["domain"]} if "domain" in report else {}),
        "maps": {kind: quantize(getattr(explanation, kind)) for kind in KINDS},
    }


def page_payload(
    result: TextExplanation, config, seconds: float, device: str, familiarity: Familiarity | None = None
) -> dict:
    """What the browser draws: every sentence's tokens, words, probabilities, maps (compactly), and what
    the training data says of its words."""
    familiarity = familiarity or Familiarity()
    sentences = []
    for s in result.sentences:
        probs = s.explanation.target_probs
        words = {"src": s.source_words, "tgt": s.target_words, "in": s.input_words}
        report = familiarity.report(s.source, probs)
        sentences.append(
            sentence_payload(s.source, s.explanation, words, mean_log_prob_of(probs), report["unfamiliar"], report)
        )
    return {
        "v": 1,
        "id": time.time_ns(),  # a fresh value each run, so the page redraws even for the same text
        "layers": {
            "encoder": config.n_encoder_layers,
            "decoder": config.n_decoder_layers,
            "cross": config.n_decoder_layers,
        },
        "heads": config.n_heads,
        "d_model": config.d_model,
        "max_len": config.max_len,
        "threshold": familiarity.rule.confidence_below,
        "options": result.options.to_dict(),
        "left_out": result.left_out,
        "status": {"method": method_name(result.options), "ms": round(seconds * 1000), "device": device.upper()},
        "sentences": sentences,
    }
