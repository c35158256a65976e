"""The numbers of named taps (model/taps.py) for one sentence, as the picture's steps draw them: the teacher-forced
pass over the sentence and its translation, each tap asked for in full (batch 1) but the output layer's, which
comes as the TOP likeliest pieces of each row. The page's own model answers the same question with the same
fields (ui/static/taps.js), so a step is drawn by one piece of code from either.

    tap_values(translator, "Ich möchte ein Bier.", ["encoder.0.self_attn.q", "logits"])
    # {"source_ids": [...], "input_ids": [...], "taps": {"encoder.0.self_attn.q": {"shape": [1, 4, 6, 64],
    #   "data": [...]}, "logits": {"shape": [1, 5, 8000], "top_ids": [[...]], "top_tokens": [["▁I", ...], ...],
    #   "top_values": [[...]], "log_z": {"0.2": [...], ..., "2.0": [...]}}}}
"""

from __future__ import annotations

import torch

from model.tap_names import tap_names
from tokenizer import token_strings
from translation.translator import Translator

from .explain import DecodingOptions, decode_one
from .stream import read

TOP = 50  # the likeliest pieces of each output row sent (the picture's softmax step draws the first ten)
# The temperatures of the picture's slider: for each, the log of the softmax's denominator over the whole
# vocabulary (log_z), so that the page's percentages are those of the full softmax, not of the TOP pieces.
TEMPERATURES = tuple(round(0.2 + 0.1 * i, 1) for i in range(19))
MOST_NAMES = 12  # the taps one answer may hold
MOST_NUMBERS = 600_000  # the numbers one answer may hold (about 5 MB of JSON)
DIGITS = 5  # decimals kept


def checked_names(names, config) -> list[str]:
    """`names` as a list of tap names this model offers (at most MOST_NAMES, no repeats), or a ValueError
    naming the first that is not one."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError("names must be a list of tap names, like ['encoder.0.self_attn.q']")
    if len(names) > MOST_NAMES:
        raise ValueError(f"at most {MOST_NAMES} tap names at once, got {len(names)}")
    known = set(tap_names(config))
    for name in names:
        if name not in known:
            raise ValueError(f"{name!r} is not a tap of this model (model/taps.py lists them)")
    return list(dict.fromkeys(names))


def numbers(value: torch.Tensor) -> list:
    """A tensor's numbers, flat, rounded to DIGITS decimals (None where one is not finite)."""
    flat = value.detach().float().flatten()
    rounded = (flat * 10**DIGITS).round() / 10**DIGITS
    return [v if finite else None for v, finite in zip(rounded.tolist(), torch.isfinite(flat).tolist(), strict=True)]


def log_z(logits: torch.Tensor) -> dict[str, list]:
    """For each slider temperature τ ("0.2" ... "2.0"), log Σ_v exp(z_v / τ) of each row of (T, V) logits: the
    softmax of a piece at τ is exp(z / τ − log_z[τ]), over all V pieces."""
    rows = logits.float()
    return {f"{tau:.1f}": numbers(torch.logsumexp(rows / tau, dim=-1)) for tau in TEMPERATURES}


def top_rows(logits: torch.Tensor, tokenizer) -> dict:
    """The output layer's (1, T, V) as the TOP likeliest pieces of each row: their ids, pieces and logits, and
    each row's log_z (the full softmax's denominator) at the slider's temperatures."""
    values, ids = logits[0].float().topk(min(TOP, logits.shape[-1]), dim=-1)
    return {
        "log_z": log_z(logits[0]),
        "shape": list(logits.shape),
        "top_ids": ids.tolist(),
        "top_tokens": [token_strings(tokenizer, row) for row in ids.tolist()],
        "top_values": [numbers(row) for row in values],
    }


@torch.inference_mode()
def tap_values(translator: Translator, text: str, names, options: DecodingOptions | None = None) -> dict:
    """The taps `names` of the teacher-forced pass over `text` and its translation (with `options`), in full but
    "logits" (top_rows); a ValueError where a name is unknown or the answer would pass MOST_NUMBERS."""
    names = checked_names(names, translator.config)
    sentence = decode_one(translator, text, options)
    device = translator.device
    src = torch.tensor([sentence.source_ids], device=device)  # (1, S)
    tgt = torch.tensor([sentence.input_ids], device=device)  # (1, T): BOS + the translation but its last piece
    seen, logits = read(translator.model, src, tgt, [n for n in names if n != "logits"], need_weights=True)
    if "logits" in names:
        assert logits is not None, "a pass over a target gives logits"
        seen["logits"] = logits
    size = sum(seen[n].numel() for n in names if n != "logits")
    if size > MOST_NUMBERS:
        raise ValueError(f"these taps hold {size:,} numbers for this sentence, more than {MOST_NUMBERS:,}: ask fewer")
    taps = {
        n: top_rows(seen[n], translator.tokenizer)
        if n == "logits"
        else {"shape": list(seen[n].shape), "data": numbers(seen[n])}
        for n in names
    }
    c = translator.config
    sizes = {"d_model": c.d_model, "n_heads": c.n_heads, "d_ff": c.d_ff, "vocab_size": c.vocab_size}
    return {"source_ids": sentence.source_ids, "input_ids": sentence.input_ids, "sizes": sizes, "taps": taps}
