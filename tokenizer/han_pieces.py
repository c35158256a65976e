"""Whole Han characters in a byte-level BPE: a Chinese character is never shown as bytes on a map.

A byte-level vocabulary writes each character as its UTF-8 bytes (three for a Han character) and joins them by
merges; a character seen too rarely to earn its merges would stay two or three byte pieces, each half a
character. Here every Han character is first made a word of its own (the pre-tokenizer's Split), so merges
never cross from one character into the next; then, for each character of the training text that BPE left in
parts, merges that join exactly those parts are appended after all learned ones (so they change no other word).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from tokenizers import Regex, Tokenizer, pre_tokenizers

from .chinese import HAN

# The Split pattern: one Han character (tokenizers' regex engine reads the class as written).
HAN_CLASS = HAN.pattern


def han_pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """Each Han character alone, then the byte-level split (GPT-2's words, numbers, punctuation, spaces)."""
    return pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(HAN_CLASS), behavior="isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )


def byte_alphabet() -> dict[int, str]:
    """GPT-2's map of the 256 bytes to printable characters (the byte-level alphabet)."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    extra = iter(range(256, 512))
    return {b: chr(b) if b in keep else chr(next(extra)) for b in range(256)}


def bpe_parts(chars: list[str], ranks: dict[tuple[str, str], int]) -> list[str]:
    """The pieces BPE makes of one word: the lowest-ranked pair merged first, every occurrence, until none."""
    parts = list(chars)
    while len(parts) > 1:
        pairs = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        known = [(rank, i) for rank, i in pairs if rank is not None]
        if not known:
            break
        best = parts[min(known)[1]], parts[min(known)[1] + 1]
        merged, i = [], 0
        while i < len(parts):
            if i < len(parts) - 1 and (parts[i], parts[i + 1]) == best:
                merged.append(parts[i] + parts[i + 1])
                i += 2
            else:
                merged.append(parts[i])
                i += 1
        parts = merged
    return parts


def whole_characters(tokenizer: Tokenizer, characters: Iterable[str]) -> Tokenizer:
    """`tokenizer` with merges appended so that each of `characters` is one piece; returns a new Tokenizer."""
    spec = json.loads(tokenizer.to_str())
    model = spec["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    alphabet, next_id = byte_alphabet(), max(model["vocab"].values()) + 1
    for character in sorted(set(characters)):
        parts = bpe_parts([alphabet[b] for b in character.encode("utf-8")], ranks)
        while len(parts) > 1:  # join left to right: each new merge ranks after every other
            ranks[(parts[0], parts[1])] = len(merges)
            merges.append((parts[0], parts[1]))
            parts = [parts[0] + parts[1], *parts[2:]]
            if parts[0] not in model["vocab"]:
                model["vocab"][parts[0]], next_id = next_id, next_id + 1
    model["merges"] = [list(pair) for pair in merges]
    return Tokenizer.from_str(json.dumps(spec, ensure_ascii=False))
