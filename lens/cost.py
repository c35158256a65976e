"""What a request costs, known before the work starts, and the budgets that refuse what costs too much.

The size of an answer is its attention maps: every layer and head of a sentence holds
S x S encoder, T x T decoder and T x S cross weights (S source tokens, T target tokens), so one
sentence of 256 tokens each way is 2.4 million weights, and 16 of them would be 38 million.
Work is bounded the same way: beams x steps for decoding, interpolation steps x tokens for
attribution. Each endpoint states its budget here (docs/limits.md lists them) and checks it twice:
before decoding, with the translation's length estimated from the German (about as many pieces
as the source, never more than max_length); and after decoding, with the length it has, before
the maps are read and sent. Past the budget the request is refused with what to shorten.

Shape legend: S source tokens, T target tokens, L layers, H heads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """The most one request may cost: attention weights in its answer, and a unit of its own for work."""

    what: str  # the endpoint or view, as a visitor names it
    max_weights: int  # attention weights (map cells) in one answer
    advice: str  # what to shorten, said when the budget is past


# Measured in bench/abuse.py: the largest answer each allows, its size and its time.
EXPLAIN = Budget("/explain", 2_500_000, "send fewer or shorter sentences, or lower max_length (/translate has "
                 "no maps and no such limit)")
PAGE = Budget("the page", 6_000_000, "translate fewer or shorter sentences at once, or lower Max length")
TRACE = Budget("/trace", 1_000_000, "send a shorter sentence or lower max_length")
ABLATE = Budget("/ablate", 2_500_000, "send a shorter sentence or lower max_length")
ATTRIBUTION_WORK = 200_000  # interpolation steps x T x (S + T): ~20 s of one core, ~300 MB (bench/abuse.py)


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
        raise ValueError(f"{many} would hold {weights / 1e6:.1f} million attention weights; {budget.what} answers "
                         f"at most {budget.max_weights / 1e6:.1f} million: {budget.advice}")


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
        raise ValueError(f"attribution of {target_tokens} English pieces from {source_tokens} German tokens with "
                         f"{steps} steps is {work / ATTRIBUTION_WORK:.1f} times the most one request may take: use "
                         f"fewer steps (at most {max(1, ATTRIBUTION_WORK // max(1, target_tokens * (source_tokens + target_tokens)))}) "
                         "or a shorter sentence")
