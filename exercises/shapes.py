"""The first check: each function on random sizes, its shapes and the properties the paper asks of it.

Every function here takes the learner's function and returns None when it passes, or one sentence
that says what is wrong, in the learner's language (exercises/words.py). Sizes are chosen unequal (B != h != L != M != d_k) so that a swapped axis shows.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from . import solutions as ok
from .words import say


def _close(a: Tensor, b: Tensor, atol: float = 1e-4) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol)


def _shape(what: str, got: Tensor, want: tuple[int, ...], why: str = "") -> str | None:
    if not isinstance(got, Tensor):
        return say("shape.not_tensor", what=what, want=want, kind=type(got).__name__)
    if tuple(got.shape) != want:
        return say("shape.wrong", what=what, got=tuple(got.shape), want=want, why=why)
    return None


def positional_encoding(fn) -> str | None:
    B, L, D = 3, 7, 16
    out = fn(torch.zeros(B, L, D))  # with x = 0 the output is the encoding itself
    problem = _shape(say("what.output"), out, (B, L, D), say("why.shape_of_x"))
    if problem:
        return problem
    if not all(_close(out[b], out[0]) for b in range(B)):
        return say("pe.batch")
    want = ok.add_positional_encoding(torch.zeros(1, L, D))[0]  # (L, D)
    if not _close(out[0], want):
        if not (_close(out[0, 0, 0::2], torch.zeros(D // 2)) and _close(out[0, 0, 1::2], torch.ones(D // 2))):
            return say("pe.sin_cos")
        return say("pe.frequencies")
    x = torch.randn(B, L, D)
    if not _close(fn(x), x + want):
        return say("pe.not_added")
    return None


def split_heads(fn) -> str | None:
    B, L, h, d_k = 2, 5, 3, 4
    x = (
        (torch.arange(L)[:, None] * 1000 + torch.arange(h * d_k)).float().expand(B, L, h * d_k)
    )  # value = 1000 pos + column
    out = fn(x.clone(), h)
    problem = _shape("split_heads(x)", out, (B, h, L, d_k), say("why.split_heads"))
    if problem:
        return problem
    if _close(out, ok.split_heads(x, h)):
        return None
    positions = (out // 1000).long()  # (B, h, L, d_k): which position each value came from
    if not bool((positions == torch.arange(L)[:, None]).all()):
        return say("split.positions")
    return say("split.columns")


def _entropy(weights: torch.Tensor) -> float:
    """The mean entropy of the rows of attention weights (nats): lower is sharper."""
    return float(-(weights * weights.clamp_min(1e-12).log()).sum(-1).mean())


def _which_way(weights, want, scaled, d_k: int) -> str:
    """Weights that differ from the paper's, said with the way they are off: the common scalings named (no
    division, a division by d_k), else sharper or flatter than the model's."""
    if _close(weights, scaled(math.sqrt(d_k))):
        return say("attention.sharp")
    if _close(weights, scaled(1 / math.sqrt(d_k))):
        return say("attention.by_d_k")
    if _entropy(weights) < _entropy(want) - 1e-3:
        return say("attention.sharper", yours=f"{_entropy(weights):.2f}", model=f"{_entropy(want):.2f}")
    if _entropy(weights) > _entropy(want) + 1e-3:
        return say("attention.flatter", yours=f"{_entropy(weights):.2f}", model=f"{_entropy(want):.2f}")
    return say("attention.differ")


def attention(fn) -> str | None:
    B, h, L, M, d_k = 2, 3, 5, 6, 8
    Q, K, V = torch.randn(B, h, L, d_k), torch.randn(B, h, M, d_k), torch.randn(B, h, M, d_k)
    mask = torch.ones(B, 1, 1, M, dtype=torch.bool)
    mask[1, ..., 4:] = False  # sentence 1's last two keys are padding
    result = fn(Q, K, V, mask)
    if not isinstance(result, tuple) or len(result) != 2:
        return say("attention.two")
    out, weights = result
    problem = _shape(say("what.weights"), weights, (B, h, L, M), say("why.attention_weights"))
    problem = problem or _shape(say("what.output"), out, (B, h, L, d_k), say("why.attention_output"))
    if problem:
        return problem
    if weights.masked_select(~mask.expand(B, h, L, M)).abs().max() > 1e-6:
        return say("attention.mask")
    if not _close(weights.sum(dim=-1), torch.ones(B, h, L)):
        return say("attention.sum")
    want_out, want = ok.attention(Q, K, V, mask)
    if not _close(weights, want):
        return _which_way(weights, want, lambda factor: ok.attention(Q * factor, K, V, mask)[1], d_k)
    if not _close(out, want_out):
        return say("attention.output")
    return None


def merge_heads(fn) -> str | None:
    B, h, L, d_k = 2, 3, 5, 4
    x = (
        (torch.arange(L)[:, None] * 1000 + torch.arange(h * d_k)).float().expand(B, L, h * d_k)
    )  # value = 1000 pos + column
    out = fn(ok.split_heads(x, h).clone())
    problem = _shape("merge_heads(x)", out, (B, L, h * d_k), say("why.merge_heads"))
    if problem:
        return problem
    if _close(out, x):
        return None
    if not bool(((out // 1000).long() == torch.arange(L)[:, None]).all()):
        return say("merge.positions")
    return say("merge.columns")


def post_ln_sublayer(fn) -> str | None:
    B, L, D = 2, 5, 8
    x = 3 * torch.randn(B, L, D) + 1
    f = nn.Linear(D, D)
    norm = nn.LayerNorm(D)  # weight 1, bias 0: its output has mean 0 and variance 1 in every row
    with torch.no_grad():
        out = fn(x, f, norm)
        problem = _shape(say("what.output"), out, (B, L, D), say("why.shape_of_x"))
        if problem:
            return problem
        if not (
            _close(out.mean(-1), torch.zeros(B, L)) and _close(out.var(-1, unbiased=False), torch.ones(B, L), 1e-3)
        ):
            return say("post_ln.not_normalised")
        if not _close(fn(x, torch.zeros_like, norm), norm(x)):
            return say("post_ln.no_residual")
        if not _close(out, ok.post_ln_sublayer(x, f, norm)):
            return say("post_ln.differ")
    return None


def cross_attention(fn) -> str | None:
    B, T, S, h, D = 2, 5, 7, 3, 12
    x, memory = torch.randn(B, T, D), torch.randn(B, S, D)
    src_mask = torch.ones(B, 1, 1, S, dtype=torch.bool)
    src_mask[1, ..., 4:] = False  # sentence 1's source ends in three padding tokens
    W_Q, W_K, W_V, W_O = (nn.Linear(D, D) for _ in range(4))
    with torch.no_grad():
        try:
            out, weights = fn(x, memory, src_mask, W_Q, W_K, W_V, W_O, h)
        except RuntimeError as err:
            return say("cross.raised", error=err, T=T, S=S)
        problem = _shape(say("what.output"), out, (B, T, D), say("why.cross_output"))
        problem = problem or _shape(say("what.weights"), weights, (B, h, T, S), say("why.cross_weights"))
        if problem:
            return problem
        if weights[1, ..., 4:].abs().max() > 1e-6:
            return say("cross.padding")
        want, want_weights = ok.cross_attention(x, memory, src_mask, W_Q, W_K, W_V, W_O, h)
        if not (_close(out, want) and _close(weights, want_weights)):
            return say("cross.differ")
    return None


def greedy_step(fn) -> str | None:
    B, t, V = 2, 4, 10
    logits = torch.randn(B, t, V)
    logits[:, :-1, 0], logits[:, -1, 0] = -10.0, 10.0  # token 0 wins at the last position only, never by chance

    def logits_of(tokens: Tensor) -> Tensor:
        assert tokens.shape == (B, t), say("greedy.tokens_so_far", shape=(B, t))
        return logits

    tokens = torch.randint(3, V, (B, t))
    out = fn(logits_of, tokens.clone())
    problem = _shape(say("what.output"), out, (B, t + 1), say("why.greedy_output"))
    if problem:
        return problem
    if not torch.equal(out[:, :t], tokens):
        return say("greedy.keep")
    if not torch.equal(out[:, t], logits[:, -1].argmax(dim=-1)):
        return say("greedy.argmax")
    return None


CHECKS = {
    "add_positional_encoding": positional_encoding,
    "split_heads": split_heads,
    "attention": attention,
    "merge_heads": merge_heads,
    "post_ln_sublayer": post_ln_sublayer,
    "cross_attention": cross_attention,
    "greedy_step": greedy_step,
}
