"""The first check: each function on random sizes, its shapes and the properties the paper asks of it.

Every function here takes the learner's function and returns None when it passes, or one sentence
that says what is wrong. Sizes are chosen unequal (B != h != L != M != d_k) so that a swapped axis shows.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from . import solutions as ok


def _close(a: Tensor, b: Tensor, atol: float = 1e-4) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol)


def _shape(what: str, got: Tensor, want: tuple[int, ...], why: str = "") -> str | None:
    if not isinstance(got, Tensor):
        return f"{what} should be a tensor of shape {want}, but it is a {type(got).__name__}"
    if tuple(got.shape) != want:
        return f"{what} has shape {tuple(got.shape)}, but it should be {want}{why}"
    return None


def positional_encoding(fn) -> str | None:
    B, L, D = 3, 7, 16
    out = fn(torch.zeros(B, L, D))  # with x = 0 the output is the encoding itself
    problem = _shape("the output", out, (B, L, D), " (B, L, D), the shape of x")
    if problem:
        return problem
    if not all(_close(out[b], out[0]) for b in range(B)):
        return (
            "the encoding changes along the batch axis (sentence 0 and sentence 1 got different ones): it must change "
            "along the positions (axis 1, length L) and be the same for every sentence of the batch"
        )
    want = ok.add_positional_encoding(torch.zeros(1, L, D))[0]  # (L, D)
    if not _close(out[0], want):
        if not (_close(out[0, 0, 0::2], torch.zeros(D // 2)) and _close(out[0, 0, 1::2], torch.ones(D // 2))):
            return (
                "position 0 should read sin(0) = 0 on the even columns and cos(0) = 1 on the odd ones: "
                "sin goes on columns 0, 2, 4, ..., cos on columns 1, 3, 5, ..."
            )
        return "the frequencies are off: columns 2i and 2i+1 take the angle pos / 10000^(2i/d_model)"
    x = torch.randn(B, L, D)
    if not _close(fn(x), x + want):
        return "the encoding is not added to x: return x + PE"
    return None


def split_heads(fn) -> str | None:
    B, L, h, d_k = 2, 5, 3, 4
    x = (
        (torch.arange(L)[:, None] * 1000 + torch.arange(h * d_k)).float().expand(B, L, h * d_k)
    )  # value = 1000 pos + column
    out = fn(x.clone(), h)
    problem = _shape("split_heads(x)", out, (B, h, L, d_k), " (B, h, L, d_k): heads before positions")
    if problem:
        return problem
    if _close(out, ok.split_heads(x, h)):
        return None
    positions = (out // 1000).long()  # (B, h, L, d_k): which position each value came from
    if not bool((positions == torch.arange(L)[:, None]).all()):
        return (
            "the heads mix positions: a head's row l must hold values of position l only. Cut the last axis "
            "into (h, d_k) first, (B, L, h, d_k), then swap the h and L axes"
        )
    return "the columns are dealt out wrongly: head j takes the block of columns j*d_k .. (j+1)*d_k - 1"


def attention(fn) -> str | None:
    B, h, L, M, d_k = 2, 3, 5, 6, 8
    Q, K, V = torch.randn(B, h, L, d_k), torch.randn(B, h, M, d_k), torch.randn(B, h, M, d_k)
    mask = torch.ones(B, 1, 1, M, dtype=torch.bool)
    mask[1, ..., 4:] = False  # sentence 1's last two keys are padding
    result = fn(Q, K, V, mask)
    if not isinstance(result, tuple) or len(result) != 2:
        return "attention should return two tensors: the output and the weights"
    out, weights = result
    problem = _shape("the weights", weights, (B, h, L, M), " (B, h, L, M): one row per query, one column per key")
    problem = problem or _shape("the output", out, (B, h, L, d_k), " (B, h, L, d_k)")
    if problem:
        return problem
    if weights.masked_select(~mask.expand(B, h, L, M)).abs().max() > 1e-6:
        return "a key where the mask is False got weight: the mask is True where attention is allowed, so fill ~mask with -inf"
    if not _close(weights.sum(dim=-1), torch.ones(B, h, L)):
        return "the weights of each query do not sum to 1 over the keys: take the softmax over the last axis (dim=-1)"
    want_out, want = ok.attention(Q, K, V, mask)
    if not _close(weights, want):
        unscaled = ok.attention(Q * math.sqrt(d_k), K, V, mask)[1]
        if _close(weights, unscaled):
            return "the weights are too sharp: divide the scores Q K^T by sqrt(d_k) before the softmax"
        return "the weights differ from softmax(Q K^T / sqrt(d_k)) with the mask"
    if not _close(out, want_out):
        return "the output should be the weights times V"
    return None


def merge_heads(fn) -> str | None:
    B, h, L, d_k = 2, 3, 5, 4
    x = (
        (torch.arange(L)[:, None] * 1000 + torch.arange(h * d_k)).float().expand(B, L, h * d_k)
    )  # value = 1000 pos + column
    out = fn(ok.split_heads(x, h).clone())
    problem = _shape("merge_heads(x)", out, (B, L, h * d_k), " (B, L, D) with D = h * d_k: the heads concatenated")
    if problem:
        return problem
    if _close(out, x):
        return None
    if not bool(((out // 1000).long() == torch.arange(L)[:, None]).all()):
        return "the positions got mixed: swap the h and L axes back to (B, L, h, d_k) before reshaping to (B, L, D)"
    return "the columns are in the wrong order: head j's d_k values go side by side in columns j*d_k .. (j+1)*d_k - 1"


def post_ln_sublayer(fn) -> str | None:
    B, L, D = 2, 5, 8
    x = 3 * torch.randn(B, L, D) + 1
    f = nn.Linear(D, D)
    norm = nn.LayerNorm(D)  # weight 1, bias 0: its output has mean 0 and variance 1 in every row
    with torch.no_grad():
        out = fn(x, f, norm)
        problem = _shape("the output", out, (B, L, D), " (B, L, D), the shape of x")
        if problem:
            return problem
        if not (
            _close(out.mean(-1), torch.zeros(B, L)) and _close(out.var(-1, unbiased=False), torch.ones(B, L), 1e-3)
        ):
            return "the result is not normalised: in Post-LN the LayerNorm comes last, LayerNorm(x + Sublayer(x))"
        if not _close(fn(x, torch.zeros_like, norm), norm(x)):
            return "with a sublayer that outputs zeros the result should be LayerNorm(x): the residual x is not added"
        if not _close(out, ok.post_ln_sublayer(x, f, norm)):
            return "the result differs from LayerNorm(x + Sublayer(x))"
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
            return (
                f"it raised RuntimeError ({err}) with T={T} target and S={S} source positions: "
                "the queries come from x (B, T, D), the keys and values from the memory (B, S, D)"
            )
        problem = _shape(
            "the output", out, (B, T, D), " (B, T, D): one row per target position, so the queries come from x"
        )
        problem = problem or _shape(
            "the weights",
            weights,
            (B, h, T, S),
            " (B, h, T, S): one column per source token, as the keys and values come from the memory",
        )
        if problem:
            return problem
        if weights[1, ..., 4:].abs().max() > 1e-6:
            return "a target position attends to the source's padding: pass src_mask to attention"
        want, want_weights = ok.cross_attention(x, memory, src_mask, W_Q, W_K, W_V, W_O, h)
        if not (_close(out, want) and _close(weights, want_weights)):
            return "the result differs from W_O(attention(W_Q x, W_K memory, W_V memory, src_mask)) over h heads"
    return None


def greedy_step(fn) -> str | None:
    B, t, V = 2, 4, 10
    logits = torch.randn(B, t, V)

    def logits_of(tokens: Tensor) -> Tensor:
        assert tokens.shape == (B, t), f"the decoder should be given the tokens so far, (B, t) = {(B, t)}"
        return logits

    tokens = torch.randint(3, V, (B, t))
    out = fn(logits_of, tokens.clone())
    problem = _shape("the output", out, (B, t + 1), " (B, t + 1): the tokens so far and one new token")
    if problem:
        return problem
    if not torch.equal(out[:, :t], tokens):
        return "the tokens so far must stay as they are, first, with the new token at the end"
    if not torch.equal(out[:, t], logits[:, -1].argmax(dim=-1)):
        return "the new token should be the most likely one (argmax) of the logits at the last position, logits[:, -1]"
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
