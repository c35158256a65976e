"""The lab's toy tasks, drawn as the page draws them (ui/static/trainer.js `pair`): a sequence of 4 to 12
symbols, and its copy or its reversal. Symbols are ids FIRST..VOCAB-1, shown as the letters A, B, C, ..."""

from __future__ import annotations

from dataclasses import dataclass

from .random import Mulberry32

PAD, BOS, EOS, FIRST, VOCAB = 0, 1, 2, 4, 24
MIN_LEN, MAX_SEQ, MAX_LEN = 4, 12, 16
TASKS = ("copy", "reverse")
HELD_OUT_SEED = 99


@dataclass(frozen=True)
class Pair:
    """One example: the source (symbols, EOS), the decoder's input (BOS, answer) and its target (answer, EOS)."""

    src: tuple[int, ...]
    tgt_in: tuple[int, ...]
    tgt_out: tuple[int, ...]


def pair(random: Mulberry32, task: str) -> Pair:
    n = MIN_LEN + int(random() * (MAX_SEQ - MIN_LEN + 1))
    seq = [FIRST + int(random() * (VOCAB - FIRST)) for _ in range(n)]
    answer = seq[::-1] if task == "reverse" else seq
    return Pair(tuple(seq + [EOS]), tuple([BOS] + answer), tuple(answer + [EOS]))


def held_out(task: str, count: int) -> list[Pair]:
    """The sequences every run is judged on: the same for A and B, never trained on by chance more than any other."""
    random = Mulberry32(HELD_OUT_SEED)
    return [pair(random, task) for _ in range(count)]


def letters(ids: tuple[int, ...] | list[int]) -> str:
    return " ".join(chr(65 + i - FIRST) for i in ids if i >= FIRST)
