"""What a search may never write: padding and BOS always, EOS before min_new_tokens, a repeated n-gram.

Shape legend: N decoder rows, t tokens so far (BOS first), G n-grams of a row, V vocabulary.
"""

from __future__ import annotations

import torch
from torch import Tensor


def repeated_ngram_bans(tokens: Tensor, n: int) -> tuple[Tensor, Tensor]:
    """The tokens that would repeat an n-gram of each row of `tokens` (N, t) (BOS first, at least n written):
    every n-gram's last token (N, G), and whether its first n - 1 are the row's last n - 1 (N, G)."""
    written = tokens[:, 1:]  # (N, t - 1)
    grams = written.unfold(1, n, 1)  # (N, G, n)
    last = written[:, written.size(1) - (n - 1) :]  # (N, n - 1)
    seen = (grams[:, :, : n - 1] == last[:, None, :]).all(dim=-1)  # (N, G)
    return grams[:, :, -1], seen


class Banned:
    """Padding and BOS are never outputs (so 'pad' keeps meaning 'no token'); EOS not before
    min_new_tokens; with no_repeat_ngram = n, no n-gram twice. The id tensors are built once per search."""

    def __init__(self, config, min_new_tokens: int, device: torch.device, no_repeat_ngram: int = 0):
        self.always = torch.tensor([config.pad_id, config.bos_id], device=device)
        self.early = torch.tensor([config.pad_id, config.bos_id, config.eos_id], device=device)
        self.min_new_tokens = min_new_tokens
        self.no_repeat_ngram = no_repeat_ngram

    def __call__(self, logits: Tensor, step: int, tokens: Tensor | None = None) -> Tensor:
        banned = self.early if step < self.min_new_tokens else self.always
        logits = logits.index_fill_(1, banned, float("-inf"))
        if self.no_repeat_ngram and tokens is not None and tokens.size(1) > self.no_repeat_ngram:
            followers, seen = repeated_ngram_bans(tokens, self.no_repeat_ngram)
            if bool(seen.any()):
                hits = torch.zeros_like(logits).scatter_add_(1, followers, seen.to(logits.dtype))
                logits = logits.masked_fill_(hits > 0, float("-inf"))
        return logits
