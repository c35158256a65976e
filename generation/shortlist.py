"""A vocabulary shortlist for the output layer (opt-in), as Marian and Bergamot use one.

Per batch of sentences the output layer multiplies only by the rows of a candidate set: the English
pieces most often seen with each German piece of the source in the training data (a lexical table,
built by `python -m training.shortlist`), the most frequent English pieces, and the special tokens.
Every other piece gets a logit of -inf, so it is never chosen. The table lives in the checkpoint
folder as shortlist.safetensors; a translation can differ from the full output layer's where the
right piece is missing from the set (bench/shortlist.py counts how often on val).

Shape legend: V vocabulary, P pieces kept per German piece, F frequent pieces, D model width.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import Tensor

FILE = "shortlist.safetensors"


@dataclass
class Shortlist:
    """table (V, P): for each German piece, the English pieces seen with it most (-1 pads); frequent (F,)."""

    table: Tensor
    frequent: Tensor

    def candidates(self, sources: list[list[int]], always: list[int]) -> Tensor:
        """The sorted candidate ids for a batch of source ids: table rows, the frequent pieces, `always`."""
        rows = self.table[torch.tensor(sorted({i for ids in sources for i in ids}), dtype=torch.long)].flatten()
        ids = torch.cat([rows[rows >= 0], self.frequent, torch.tensor(always, dtype=torch.long)])
        return torch.unique(ids)  # sorted

    def save(self, folder: str | Path) -> Path:
        path = Path(folder) / FILE
        save_file(
            {"table": self.table.to(torch.int32).contiguous(), "frequent": self.frequent.to(torch.int32)},
            str(path),
            metadata={"format": "attention-lens shortlist 1"},
        )
        return path

    @classmethod
    def load(cls, folder: str | Path, vocab_size: int) -> Shortlist:
        path = Path(folder) / FILE
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} does not exist: build it with python -m training.shortlist --checkpoint {folder}"
            )
        tensors = load_file(str(path))
        table, frequent = tensors["table"].long(), tensors["frequent"].long()
        if table.size(0) != vocab_size or int(table.max()) >= vocab_size or int(frequent.max()) >= vocab_size:
            raise ValueError(f"{path} was built for another vocabulary than this model's {vocab_size} pieces")
        return cls(table, frequent)


class ShortlistedOutput:
    """The output layer restricted to `candidates` (sorted ids): logits (N, V), -inf outside the set."""

    def __init__(self, weight: Tensor, bias: Tensor | None, candidates: Tensor, vocab_size: int):
        self.weight = weight[candidates].t().contiguous()  # (D, |C|): copied once per search
        self.bias = None if bias is None else bias[candidates]
        self.candidates, self.vocab_size = candidates.to(weight.device), vocab_size

    def __call__(self, x: Tensor) -> Tensor:
        small = x @ self.weight if self.bias is None else torch.addmm(self.bias, x, self.weight)  # (N, |C|)
        logits = small.new_full((x.size(0), self.vocab_size), float("-inf"))
        logits[:, self.candidates] = small
        return logits
