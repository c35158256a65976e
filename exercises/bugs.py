"""Planted bugs: for each exercise, small wrong versions of the solution that the checks must catch.

Each bug has a name, the words a check's message must use to name what is wrong, in English
(`named_by`) and in Chinese (`named_by_zh`), and the function. `python -m exercises selftest` runs the
checks on every one, in the current language.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from . import solutions as ok
from .words import language


@dataclass(frozen=True)
class Bug:
    name: str
    named_by: str  # a check's message about this bug contains these words
    named_by_zh: str  # and its Chinese message these
    fn: Callable

    def words(self) -> str:
        """The words that name this bug in the current language."""
        return self.named_by_zh if language() == "zh-CN" else self.named_by


def _pe(L: int, D: int, exponent: Callable[[Tensor], Tensor], sin_first: bool = True) -> Tensor:
    """The (L, D) sinusoids with a chosen exponent, and sin/cos on the even/odd columns or swapped."""
    pos = torch.arange(L, dtype=torch.float32)[:, None]  # (L, 1)
    angle = pos / 10000 ** exponent(torch.arange(0, D, 2, dtype=torch.float32))  # (L, D/2)
    pe = torch.zeros(L, D)
    pe[:, 0::2], pe[:, 1::2] = (
        (torch.sin(angle), torch.cos(angle)) if sin_first else (torch.cos(angle), torch.sin(angle))
    )
    return pe


def pe_over_batch(x: Tensor) -> Tensor:
    B, L, D = x.shape
    return x + _pe(B, D, lambda two_i: two_i / D)[:, None, :]  # (B, 1, D): position b given to sentence b


def pe_cos_first(x: Tensor) -> Tensor:
    B, L, D = x.shape
    return x + _pe(L, D, lambda two_i: two_i / D, sin_first=False)


def pe_i_not_2i(x: Tensor) -> Tensor:
    B, L, D = x.shape
    return x + _pe(L, D, lambda two_i: (two_i / 2) / D)


def split_without_transpose(x: Tensor, h: int) -> Tensor:
    B, L, D = x.shape
    return x.reshape(B, h, L, D // h)  # the right shape, but heads cut across positions


def split_interleaved(x: Tensor, h: int) -> Tensor:
    B, L, D = x.shape
    return x.view(B, L, D // h, h).permute(0, 3, 1, 2)  # head j takes every h-th column


def split_forgets_transpose(x: Tensor, h: int) -> Tensor:
    B, L, D = x.shape
    return x.view(B, L, h, D // h)  # (B, L, h, d_k)


def attention_without_scale(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None):
    return ok.attention(Q * math.sqrt(Q.size(-1)), K, V, mask)  # Q K^T, never divided by sqrt(d_k)


def attention_divided_by_d_k(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None):
    return ok.attention(Q / math.sqrt(Q.size(-1)), K, V, mask)  # Q K^T / d_k: divided by d_k, not sqrt(d_k)


def attention_mask_inverted(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # hides the allowed keys, keeps the masked ones
    weights = scores.softmax(dim=-1).nan_to_num(0.0)
    return weights @ V, weights


def attention_softmax_over_queries(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-2).nan_to_num(0.0)  # normalised down the queries, not across the keys
    return weights @ V, weights


def merge_without_transpose(x: Tensor) -> Tensor:
    B, h, L, d_k = x.shape
    return x.reshape(B, L, h * d_k)


def merge_interleaved(x: Tensor) -> Tensor:
    B, h, L, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, L, h * d_k)  # head j's values every h-th column


def merge_sums_heads(x: Tensor) -> Tensor:
    return x.sum(dim=1)  # (B, L, d_k): added, not concatenated


def pre_ln(x: Tensor, sublayer, norm) -> Tensor:
    return x + sublayer(norm(x))  # LayerNorm before the sublayer and the residual


def no_residual(x: Tensor, sublayer, norm) -> Tensor:
    return norm(sublayer(x))


def residual_after_norm(x: Tensor, sublayer, norm) -> Tensor:
    return x + norm(sublayer(x))


def cross_queries_from_memory(x, memory, src_mask, W_Q, W_K, W_V, W_O, h):
    return ok.cross_attention(memory, x, src_mask, W_Q, W_K, W_V, W_O, h)  # x and memory swapped


def cross_without_mask(x, memory, src_mask, W_Q, W_K, W_V, W_O, h):
    return ok.cross_attention(x, memory, torch.ones_like(src_mask), W_Q, W_K, W_V, W_O, h)


def cross_keys_from_target(x, memory, src_mask, W_Q, W_K, W_V, W_O, h):
    Q, K, V = (ok.split_heads(W(x), h) for W in (W_Q, W_K, W_V))  # self-attention, not cross
    out, weights = ok.attention(Q, K, V)
    return W_O(ok.merge_heads(out)), weights


def greedy_first_position(logits_of, tokens: Tensor) -> Tensor:
    next_token = logits_of(tokens)[:, 0].argmax(dim=-1)  # the first position's prediction
    return torch.cat([tokens, next_token[:, None]], dim=1)


def greedy_argmin(logits_of, tokens: Tensor) -> Tensor:
    next_token = logits_of(tokens)[:, -1].argmin(dim=-1)
    return torch.cat([tokens, next_token[:, None]], dim=1)


def greedy_prepends(logits_of, tokens: Tensor) -> Tensor:
    next_token = logits_of(tokens)[:, -1].argmax(dim=-1)
    return torch.cat([next_token[:, None], tokens], dim=1)  # the new token before the prefix


BUGS: dict[str, list[Bug]] = {
    "add_positional_encoding": [
        Bug("the encoding broadcast over the batch instead of positions", "batch", "批量", pe_over_batch),
        Bug("cos on the even columns, sin on the odd", "sin", "偶数列", pe_cos_first),
        Bug("exponent i/D instead of 2i/D", "frequenc", "频率", pe_i_not_2i),
    ],
    "split_heads": [
        Bug("reshaped straight to (B, h, L, d_k)", "positions", "位置", split_without_transpose),
        Bug("head j takes every h-th column", "columns", "列分错", split_interleaved),
        Bug("no transpose: (B, L, h, d_k)", "shape", "形状", split_forgets_transpose),
    ],
    "attention": [
        Bug("no sqrt(d_k)", "sqrt(d_k)", "除以 sqrt(d_k)", attention_without_scale),
        Bug("divided by d_k, not sqrt(d_k)", "instead of sqrt(d_k)", "而不是 sqrt(d_k)", attention_divided_by_d_k),
        Bug("the mask inverted", "mask", "掩码", attention_mask_inverted),
        Bug("softmax over the queries", "sum to 1", "之和不为 1", attention_softmax_over_queries),
    ],
    "merge_heads": [
        Bug("reshaped without the transpose", "positions", "位置", merge_without_transpose),
        Bug("heads interleaved", "columns", "列的顺序", merge_interleaved),
        Bug("heads summed, not concatenated", "shape", "形状", merge_sums_heads),
    ],
    "post_ln_sublayer": [
        Bug("LayerNorm before the residual (Pre-LN)", "LayerNorm", "层归一化", pre_ln),
        Bug("no residual", "residual", "残差", no_residual),
        Bug("x added after the LayerNorm", "LayerNorm", "层归一化", residual_after_norm),
    ],
    "cross_attention": [
        Bug("queries from the memory, keys from the target", "queries", "查询", cross_queries_from_memory),
        Bug("the source mask ignored", "padding", "填充", cross_without_mask),
        Bug("keys and values from the target", "memory", "记忆", cross_keys_from_target),
    ],
    "greedy_step": [
        Bug("the first position's logits", "last position", "最后一个位置", greedy_first_position),
        Bug("argmin", "most likely", "可能性最大", greedy_argmin),
        Bug("the new token put first", "end", "末尾", greedy_prepends),
    ],
}
