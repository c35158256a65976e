"""What a request costs, known before the work starts, and the budgets that refuse what costs too much.

The size of an answer is its attention maps: every layer and head of a sentence holds
S x S encoder, T x T decoder and T x S cross weights (S source tokens, T target tokens), so one
sentence of 256 tokens each way is 2.4 million weights, and 16 of them would be 38 million.
Work is bounded the same way: beams x steps for decoding, interpolation steps x tokens for
attribution. Each endpoint states its budget here (docs/limits.md lists them) and checks it twice:
before decoding, with the translation's length estimated from the German (about as many pieces
as the source, never more than max_length); and after decoding, with the length it has, before
the maps are read and sent. Past the budget the request is refused with what to shorten.

What a request may ask is bounded here too: its whole-number arguments (a layer, a head, a row, a step) are
checked by name, so NaN, ±inf, 1.5, True and "2" are refused in words, never met as an OverflowError deep inside.

Shape legend: S source tokens, T target tokens, L layers, H heads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """The most one request may cost: attention weights in its answer, and a unit of its own for work."""

    what: str  # the endpoint or view, as a visitor names it
    max_weights: int  # attention weights (map cells) in one answer
    advice: str  # what to shorten, said when the budget is past


# Measured in load/abuse.py: the largest answer each allows, its size and its time.
EXPLAIN = Budget(
    "/explain",
    2_500_000,
    "send fewer or shorter sentences, or lower max_length (/translate has no maps and no such limit)",
)
PAGE = Budget("the page", 6_000_000, "translate fewer or shorter sentences at once, or lower Max length")
TRACE = Budget("/trace", 1_000_000, "send a shorter sentence or lower max_length")
ABLATE = Budget("/ablate", 2_500_000, "send a shorter sentence or lower max_length")
INSIDE = Budget("/qkv, /logit_lens and /contributions", 2_500_000, "send a shorter sentence or lower max_length")
ATTRIBUTION_WORK = 200_000  # interpolation steps x T x (S + T): ~20 s of one core, ~300 MB (load/abuse.py)


# Work of the inside views, which replay the model many times over (patching, contrast, contributions): the
# largest intermediate of one replayed run is held to CHUNK_CELLS numbers by running the runs in chunks, and a
# request's whole work is held to its budget's `max_work` attention cells, runs x L H (S^2 + T^2 + T S),
# measured in load/abuse.py (the worst allowed of each endpoint, its seconds and memory, docs/limits.md).
CHUNK_CELLS = 4_000_000  # numbers in the largest tensor of one chunk of replayed runs (16 MB in fp32)


@dataclass(frozen=True)
class WorkBudget:
    what: str
    max_work: int  # attention cells computed, over every replayed run
    advice: str


PATCH_WORK = WorkBudget(
    "/patch", 500_000_000, "use shorter sentences (patching replays the model once per German piece and level)"
)
CONTRAST_WORK = WorkBudget("/contrast", 500_000_000, "use a shorter sentence or an earlier step")


def run_cells(config, source_tokens: int, target_tokens: int) -> int:
    """Numbers in the largest intermediate of one replayed run: its attention scores or its feed-forward."""
    S, T = source_tokens, max(1, target_tokens)
    return max(config.n_heads * max(S * S, T * T, T * S), max(S, T) * config.d_ff, config.vocab_size)


def rows_per_chunk(cells_per_run: int) -> int:
    """How many replayed runs one chunk may hold, so that its largest tensor stays within CHUNK_CELLS."""
    return max(1, CHUNK_CELLS // max(1, cells_per_run))


def replay_work(config, runs: int, source_tokens: int, target_tokens: int) -> int:
    """Attention cells of `runs` replays of the whole model: runs x L H (S^2 + T^2 + T S)."""
    S, T = source_tokens, target_tokens
    return runs * config.n_heads * (config.n_encoder_layers * S * S + config.n_decoder_layers * (T * T + T * S))


def check_work(budget: WorkBudget, work: int) -> None:
    """Refuse (ValueError) a request whose replays would compute more than its budget, saying what to shorten."""
    if work > budget.max_work:
        raise ValueError(
            f"{budget.what} would compute {work / 1e6:.0f} million attention weights over its replays of "
            f"the model; at most {budget.max_work / 1e6:.0f} million are allowed: {budget.advice}"
        )


def map_weights(config, source_tokens: int, target_tokens: int) -> int:
    """Attention weights of one sentence's maps: L H S^2 (encoder) + L H (T^2 + T S) (decoder and cross)."""
    S, T = source_tokens, target_tokens
    return config.n_heads * (config.n_encoder_layers * S * S + config.n_decoder_layers * (T * T + T * S))


def estimated_target(source_tokens: int, max_new_tokens: int | None) -> int:
    """Pieces a translation is expected to have before it is decoded: about the source's, at most max_length."""
    return max(1, source_tokens if max_new_tokens is None else min(max_new_tokens, source_tokens))


def check_weights(budget: Budget, weights: int, sentences: int = 1) -> None:
    """Refuse (ValueError) an answer of more than the budget's attention weights, saying what to shorten."""
    if weights > budget.max_weights:
        many = f"these {sentences} sentences' maps" if sentences > 1 else "this sentence's maps"
        raise ValueError(
            f"{many} would hold {weights / 1e6:.1f} million attention weights; {budget.what} answers "
            f"at most {budget.max_weights / 1e6:.1f} million: {budget.advice}"
        )


def check_before(budget: Budget, config, source_lengths: list[int], max_new_tokens: int | None) -> None:
    """The budget checked before any decoding, with each translation's length estimated."""
    weights = sum(map_weights(config, S, estimated_target(S, max_new_tokens)) for S in source_lengths)
    check_weights(budget, weights, len(source_lengths))


def check_after(budget: Budget, config, lengths: list[tuple[int, int]]) -> None:
    """The budget checked after decoding, with each sentence's (S, T), before its maps are read."""
    check_weights(budget, sum(map_weights(config, S, T) for S, T in lengths), len(lengths))


def check_attribution(steps: int, source_tokens: int, target_tokens: int) -> None:
    """Refuse integrated gradients past ATTRIBUTION_WORK (steps x T x (S + T)), saying what to lower."""
    work = steps * target_tokens * (source_tokens + target_tokens)
    if work > ATTRIBUTION_WORK:
        raise ValueError(
            f"attribution of {target_tokens} English pieces from {source_tokens} German tokens with "
            f"{steps} steps is {work / ATTRIBUTION_WORK:.1f} times the most one request may take: use "
            f"fewer steps (at most {max(1, ATTRIBUTION_WORK // max(1, target_tokens * (source_tokens + target_tokens)))}) "
            "or a shorter sentence"
        )


def is_whole(value) -> bool:
    """True for an int, or a float with a whole finite value (JSON may send 2.0); never for a bool."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or (math.isfinite(value) and value == int(value))


def checked_whole(value, name: str, low: int, high: int, note: str = "") -> int:
    """`value` as an int from `low` to `high`, or a ValueError naming `name` and the range."""
    if not is_whole(value) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}{note}, got {value!r}")
    return int(value)
