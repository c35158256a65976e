"""Live ablation: translate with some heads switched off, beside the translation with all heads on.

The words that changed are marked on both sides by a word-level diff (difflib's longest matching
blocks): a word of the original that the ablated translation dropped or replaced, and a word of
the ablated translation that is new. The ablated model's own maps come with it (an Explanation).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lens.maps import Explanation
from model.heads import KINDS, HeadMask

from .cost import ABLATE
from .explain import DecodingOptions, explain_one
from .importance import layers_of, ranked_heads


@dataclass
class WordDiff:
    """Both translations as words, each word marked True where it changed."""

    original_words: list[str]
    original_changed: list[bool]
    ablated_words: list[str]
    ablated_changed: list[bool]

    @property
    def n_changed(self) -> int:
        return sum(self.original_changed) + sum(self.ablated_changed)

    def to_dict(self) -> dict:
        return {
            "original_words": self.original_words,
            "original_changed": self.original_changed,
            "ablated_words": self.ablated_words,
            "ablated_changed": self.ablated_changed,
        }


def word_diff(original: str, ablated: str) -> WordDiff:
    """Mark the words outside the longest common runs of the two word sequences as changed."""
    before, after = original.split(), ablated.split()
    before_changed, after_changed = [True] * len(before), [True] * len(after)
    for block in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_matching_blocks():
        before_changed[block.a : block.a + block.size] = [False] * block.size
        after_changed[block.b : block.b + block.size] = [False] * block.size
    return WordDiff(before, before_changed, after, after_changed)


@dataclass
class Ablation:
    """The original and ablated translations of one sentence, the diff, and the ablated maps."""

    text: str
    original: str
    ablated: str
    diff: WordDiff
    head_mask: dict  # HeadMask.to_dict(): {"encoder": [[0/1]], "decoder": ..., "cross": ...}
    switched_off: list[tuple[str, int, int]]  # (kind, layer, head) of every head switched off
    explanation: Explanation  # of the ablated model

    def to_dict(self, decimals: int = 5) -> dict:
        return {
            "text": self.text,
            "original": self.original,
            "ablated": self.ablated,
            "diff": self.diff.to_dict(),
            "head_mask": self.head_mask,
            "switched_off": [list(head) for head in self.switched_off],
            "explanation": self.explanation.to_dict(decimals),
        }


def switched_off_heads(mask_dict: dict) -> list[tuple[str, int, int]]:
    """(kind, layer, head) of every 0 in a HeadMask.to_dict()."""
    return [
        (kind, layer, head)
        for kind in KINDS
        for layer, heads in enumerate(mask_dict[kind])
        for head, on in enumerate(heads)
        if not on
    ]


def parse_head(spec: str, config) -> list[tuple[str, int, int]]:
    """'cross:2:1' (kind:layer:head, counted from 1 as on the page; '*' for all) -> 0-based heads."""
    parts = spec.strip().split(":") if isinstance(spec, str) else []
    if len(parts) != 3 or parts[0] not in KINDS:
        raise ValueError(
            f"heads: {spec!r} is not kind:layer:head with kind one of {', '.join(KINDS)} "
            "(e.g. 'cross:2:1'; layers and heads count from 1; '*' means all)"
        )
    kind, counts = parts[0], (layers_of(config, parts[0]), config.n_heads)
    picked: list[Sequence[int]] = []  # the layers, then the heads
    for name, text, n in zip(("layer", "head"), parts[1:], counts):
        if text == "*":
            picked.append(range(n))
        elif text.isascii() and text.isdigit() and 1 <= int(text) <= n:  # '²' is a digit to isdigit, not to int
            picked.append([int(text) - 1])
        else:
            raise ValueError(f"heads: {spec!r}: {kind} {name} must be 1 to {n} or '*', got {text!r}")
    return [(kind, layer, head) for layer in picked[0] for head in picked[1]]


def head_mask_from(heads, config) -> HeadMask:
    """A HeadMask from a list of 'kind:layer:head' specs, a HeadMask.to_dict(), or either as JSON text."""
    if isinstance(heads, str):
        text = heads.strip()
        if text.startswith(("[", "{")):
            try:
                heads = json.loads(text)
            except json.JSONDecodeError as err:
                raise ValueError(
                    f'heads: not valid JSON ({err.msg}); send a list like ["cross:2:1"] or a mask'
                ) from None
            except RecursionError:
                raise ValueError('heads: nested too deeply; send a list like ["cross:2:1"] or a mask') from None
        else:
            heads = [s for s in text.split(",") if s.strip()]
    if isinstance(heads, dict):
        return HeadMask.from_dict(heads, config)
    if not isinstance(heads, (list, tuple)):
        raise ValueError(f'heads must be a list like ["cross:2:1"] or a head mask, got {type(heads).__name__}')
    if len(heads) > 3 * 64 * 64:
        raise ValueError("heads: too many entries")
    mask = HeadMask.all_on(config)
    for spec in heads:
        for kind, layer, head in parse_head(spec, config):
            mask = mask.switched_off(kind, layer, head)
    return mask


def ablate(
    translator,
    text: str,
    head_mask: HeadMask | dict,
    num_beams: int = 4,
    length_penalty: float = 1.0,
    max_new_tokens: int | None = None,
) -> Ablation:
    """Translate `text` with all heads on and with `head_mask` (a HeadMask or its to_dict())."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("ablate() needs a non-empty German sentence as text")
    if isinstance(head_mask, dict):
        head_mask = HeadMask.from_dict(head_mask, translator.config)
    if not isinstance(head_mask, HeadMask):
        raise TypeError(f"head_mask must be a HeadMask or its to_dict(), got {type(head_mask).__name__}")
    options: dict[str, Any] = dict(num_beams=num_beams, length_penalty=length_penalty, max_new_tokens=max_new_tokens)
    explanation = explain_one(
        translator, text, DecodingOptions(**options), ABLATE, head_mask=head_mask
    )  # refused first
    original = translator.translate(text, **options)
    mask_dict = head_mask.to_dict()
    return Ablation(
        text=text,
        original=original,
        ablated=explanation.translation,
        diff=word_diff(original, explanation.translation),
        head_mask=mask_dict,
        switched_off=switched_off_heads(mask_dict),
        explanation=explanation,
    )


def most_important(importance: dict, kind: str | None, n: int) -> list[tuple[str, int, int]]:
    """The n heads whose switching off raises val loss most (head_importance.json); kind None: any."""
    return [row[:3] for row in ranked_heads(importance, kind)[: max(0, n)]]


def least_important(importance: dict, kind: str | None, n: int) -> list[tuple[str, int, int]]:
    """The n heads whose switching off raises val loss least (or lowers it)."""
    ranked = ranked_heads(importance, kind)
    return [row[:3] for row in ranked[::-1][: max(0, n)]]
