"""Attribution beside attention: which source tokens each target token's probability rests on.

For every target token t of a translation, F_t is the log-probability the model gives it in one
teacher-forced pass over that translation. Its attribution to source token s is summed over the
model width of an embedding-space attribution:
- integrated gradients (Sundararajan et al. 2017): (x - x') * mean over `steps` points on the
  straight path from the baseline x' to the input x of dF_t/dx. Baseline x' = the zero token
  embedding: the encoder then sees the positional encoding alone. The path integral uses the
  midpoint rule, alpha_k = (k - 1/2) / steps; the steps run a few at a time, and one backward is
  vectorised over the target tokens. Completeness: the attributions of t sum to F_t(x) - F_t(x'),
  up to the quadrature error reported in `completeness_gap`.
- input x gradient: x * dF_t/dx at the input alone, one forward and one backward; fast, no baseline.
The embeddings are put in the model's place at the tap "encoder.tokens" (model/taps.py): no
hooks on the shared model, so concurrent requests cannot run each other's. Memory is bounded: the
path goes a few points at a time and each gradient is reduced as soon as it is made.

Attention rollout for the encoder (Abnar & Zuidema 2020): each layer's head-mean map mixed
with the residual connection as 0.5 * A + 0.5 * I, rows renormalised, multiplied up the stack.

Agreement: per cross-attention layer and head, the share of target tokens whose most-attended
source token is also the most-attributed one (signed attribution, highest value). The source
</s> and target </s> are left out: </s> is where attention parks when it has nowhere to go.

Shape legend: R rows of a batch (interpolation steps), S source tokens, T target tokens,
D model width, L layers, H heads, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from model.attention import padding_mask
from tokenizer import token_strings

from .maps import teacher_forced
from .stream import standing_in

METHODS = ("integrated_gradients", "input_x_gradient")
BASELINE = "zero token embedding (the encoder sees the positional encoding alone)"
ROLLOUT_RESIDUAL = 0.5  # weight of the identity mixed into each layer's map, as in Abnar & Zuidema


@dataclass
class SourceAttribution:
    """Attributions of one translation: scores[t, s] is source token s's share in target token t."""

    scores: np.ndarray  # (T, S) float32, summed over D
    target_logprobs: np.ndarray  # (T,) F_t(x)
    baseline_logprobs: np.ndarray  # (T,) F_t(x'); equal to target_logprobs for input x gradient
    completeness_gap: np.ndarray  # (T,) scores.sum(1) - (F_t(x) - F_t(x')); 0 is exact


@dataclass
class Attribution:
    """Attribution, encoder rollout and agreement for one sentence, ready for the page."""

    source_tokens: list[str]  # S, ending in </s>
    target_tokens: list[str]  # T, ending in </s> when the model finished
    translation: str
    method: str
    steps: int  # interpolation steps (1 for input x gradient)
    baseline: str
    scores: np.ndarray  # (T, S)
    target_logprobs: np.ndarray  # (T,)
    completeness_gap: np.ndarray  # (T,)
    rollout: np.ndarray  # (L_enc, S, S): rollout through encoder layers 0..l; rows sum to 1
    cross_rollout: np.ndarray  # (L_dec, T, S): each layer's head-mean cross map, traced through the rollout
    agreement: np.ndarray  # (L_dec, H) share of kept target tokens, in [0, 1]
    agreement_mean_heads: np.ndarray  # (L_dec,) the same for each layer's head-mean map
    agreement_tokens: int  # target tokens the agreement counts (special tokens left out)
    notes: dict = field(default_factory=dict)

    def to_dict(self, decimals: int = 5) -> dict:
        """JSON-ready: lists instead of arrays, floats rounded to `decimals` places."""

        def rounded(a: np.ndarray) -> list:
            return np.round(a.astype(np.float64), decimals).tolist()

        return {
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "translation": self.translation,
            "method": self.method,
            "steps": self.steps,
            "baseline": self.baseline,
            "scores": rounded(self.scores),
            "target_logprobs": rounded(self.target_logprobs),
            "completeness_gap": rounded(self.completeness_gap),
            "rollout": rounded(self.rollout),
            "cross_rollout": rounded(self.cross_rollout),
            "agreement": rounded(self.agreement),
            "agreement_mean_heads": rounded(self.agreement_mean_heads),
            "agreement_tokens": self.agreement_tokens,
            "notes": self.notes,
        }


def _teacher_forced_pass(
    model, src: Tensor, tgt_out: Tensor, embedding: Tensor, head_mask=None
) -> tuple[Tensor, Tensor]:
    """log p(tgt_out[t] | src, tgt_out[:t]) for each of R rows of source embeddings, (R, T), and
    the decoder output (R, T, D) that the output projection read.

    src (R, S) ids, tgt_out (T,) ids, embedding (R, S, D): what model.embed returns for src. The
    embedding is passed in (no hooks on the shared model), so concurrent calls cannot meet.
    """
    c = model.config
    R = src.size(0)
    tgt_in = torch.cat([tgt_out.new_tensor([c.bos_id]), tgt_out[:-1]]).expand(R, -1)  # (R, T)
    head_mask = model.checked_head_mask(head_mask)
    src_mask = padding_mask(src, c.pad_id)  # (R, 1, 1, S)
    memory, _ = model.encode(src, src_mask, head_mask=head_mask, tap=standing_in(embedding))
    hidden, _, _ = model.decode(tgt_in, memory, src_mask, head_mask=head_mask)  # (R, T, D)
    logprobs = model.lm_head(hidden).float().log_softmax(dim=-1)  # (R, T, V)
    return logprobs.gather(-1, tgt_out.expand(R, -1)[..., None]).squeeze(-1), hidden  # (R, T), (R, T, D)


def _per_target_gradients(logprobs: Tensor, hidden: Tensor, inputs: Tensor, targets: range) -> Tensor:
    """d logprobs[r, t] / d inputs[r] for each t in `targets`, rows independent: (len(targets), *inputs.shape).

    log p of target t reads only the decoder output at step t, so its gradient there, g[:, t],
    comes from one ordinary backward through the output projection. From there one backward
    through the model is vectorised over the cotangents (is_grads_batched), not one per target;
    cotangent t is g[:, t] at step t and zero elsewhere, D wide instead of V wide.
    """
    (g,) = torch.autograd.grad(logprobs[:, targets.start : targets.stop].sum(), hidden, retain_graph=True)  # (R, T, D)
    steps = torch.tensor(targets, device=g.device)
    cotangents = g.new_zeros(len(targets), *g.shape)  # (n, R, T, D)
    cotangents[torch.arange(len(targets)), :, steps] = g[:, steps].transpose(0, 1)  # [i, :, t_i] = g[:, t_i]
    (grads,) = torch.autograd.grad(hidden, inputs, grad_outputs=cotangents, is_grads_batched=True)
    return grads  # (n, R, S, D)


def _path_scores(
    model, src1: Tensor, tgt_out: Tensor, x: Tensor, alphas: Tensor, head_mask, group: int, rows: int
) -> Tensor:
    """sum over the path points alpha * x of (dF_t/dx . x), summed over D: (T, S).

    Memory stays bounded: the points go `rows` at a time, and each group's gradients (n, R, S, D)
    are reduced to (n, S) at once, never kept for all T. Targets go in groups of `group`: target t's
    gradient needs the decoder only up to step t (it is causal), so each group runs over the
    shortest prefix that holds it, about a third less decoder work than one pass over all T.
    """
    T = tgt_out.size(0)
    total = x.new_zeros(T, x.size(1))  # (T, S)
    for chunk in alphas.split(rows):
        path = (chunk[:, None, None] * x).requires_grad_(True)  # (r, S, D): the baseline is zero
        src = src1.expand(len(chunk), -1)  # (r, S)
        for start in range(0, T, group):
            stop = min(start + group, T)
            logprobs, hidden = _teacher_forced_pass(model, src, tgt_out[:stop], path, head_mask)  # (r, stop)
            grads = _per_target_gradients(logprobs, hidden, path, range(start, stop))  # (n, r, S, D)
            total[start:stop] += (grads.sum(1) * x[0]).sum(-1).detach()
    return total


def attribute_ids(
    model,
    src_ids: list[int],
    tgt_ids: list[int],
    method: str = "integrated_gradients",
    steps: int = 32,
    head_mask=None,
    group: int = 6,
    rows: int = 16,
) -> SourceAttribution:
    """Attribute each of tgt_ids (the outputs, ending in EOS) to src_ids; see the module docstring.
    `group` targets share one backward and `rows` path points one pass (fewer: less memory, more passes)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "integrated_gradients" and steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if not src_ids or not tgt_ids:
        raise ValueError("attribution needs a non-empty source and target")
    device = model.embed.weight.device
    was_training = model.training
    model.eval()  # dropout would make the gradient a random draw
    try:
        src1 = torch.tensor([src_ids], device=device)  # (1, S)
        tgt_out = torch.tensor(tgt_ids, device=device)  # (T,)
        with torch.no_grad():
            x = model.embed(src1)  # (1, S, D)
            # F at the two ends of the path: the input and the zero baseline (completeness)
            f_input, f_baseline = _teacher_forced_pass(
                model, src1.expand(2, -1), tgt_out, torch.cat([x, torch.zeros_like(x)]), head_mask
            )[0]
        if method == "input_x_gradient":
            alphas = torch.ones(1, device=device)
        else:
            alphas = (torch.arange(steps, device=device, dtype=x.dtype) + 0.5) / steps  # midpoint rule
        with torch.enable_grad():
            scores = _path_scores(model, src1, tgt_out, x, alphas, head_mask, group, rows) / len(alphas)  # (T, S)
        if method == "input_x_gradient":
            f_baseline = f_input
            gap = torch.zeros_like(f_input)  # no baseline, no completeness
        else:
            gap = scores.sum(1) - (f_input - f_baseline)
    finally:
        model.train(was_training)
    return SourceAttribution(
        scores=scores.float().cpu().numpy(),
        target_logprobs=f_input.float().cpu().numpy(),
        baseline_logprobs=f_baseline.float().cpu().numpy(),
        completeness_gap=gap.float().cpu().numpy(),
    )


def attention_rollout(encoder_maps: np.ndarray, residual: float = ROLLOUT_RESIDUAL) -> np.ndarray:
    """Encoder maps (L, H, S, S) -> rollout (L, S, S): entry [l, i, j] is how much of token i's
    state after layer l flows from input token j, counting the residual path as `residual` * I."""
    L, _, S, _ = encoder_maps.shape
    flow = np.eye(S, dtype=np.float64)
    out = np.zeros((L, S, S), dtype=np.float32)
    for layer in range(L):
        mixed = (1.0 - residual) * encoder_maps[layer].mean(axis=0) + residual * np.eye(S)  # (S, S)
        mixed = mixed / mixed.sum(axis=-1, keepdims=True)
        flow = mixed @ flow  # a later layer reads the mixture the earlier ones wrote
        out[layer] = flow
    return out


def agreement(
    cross: np.ndarray, scores: np.ndarray, source_keep: np.ndarray, target_keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Share of kept target rows where argmax of attention = argmax of attribution over kept sources.

    cross (L, H, T, S), scores (T, S), keep masks (S,) and (T,) bool. Returns (L, H), (L,) for
    each layer's head-mean map, and the number of target tokens counted.
    """
    if not source_keep.any() or not target_keep.any():
        L, H = cross.shape[:2]
        return np.zeros((L, H), np.float32), np.zeros(L, np.float32), 0
    kept_cols = np.flatnonzero(source_keep)
    attributed = kept_cols[scores[target_keep][:, kept_cols].argmax(-1)]  # (T',)
    rows = cross[:, :, target_keep][..., kept_cols]  # (L, H, T', S')
    attended = kept_cols[rows.argmax(-1)]  # (L, H, T')
    per_head = (attended == attributed).mean(-1)  # (L, H)
    attended_mean = kept_cols[rows.mean(axis=1).argmax(-1)]  # (L, T')
    per_layer = (attended_mean == attributed).mean(-1)  # (L,)
    return per_head.astype(np.float32), per_layer.astype(np.float32), int(target_keep.sum())


def special_token_masks(config, src_ids: list[int], tgt_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Which source and target positions agreement counts: all but pad, <s> and </s>."""
    special = {config.pad_id, config.bos_id, config.eos_id}
    return (
        np.array([i not in special for i in src_ids], dtype=bool),
        np.array([i not in special for i in tgt_ids], dtype=bool),
    )


def attention_maps(translator, src_ids: list[int], tgt_ids: list[int], head_mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Encoder (L, H, S, S) and cross (L, H, T, S) maps of the teacher-forced pass over tgt_ids."""
    explanation = teacher_forced(translator, src_ids, list(tgt_ids), head_mask)
    return explanation.encoder, explanation.cross


def translate_ids(
    translator,
    src_ids: list[int],
    num_beams: int = 4,
    length_penalty: float = 1.0,
    max_new_tokens: int | None = None,
    head_mask=None,
) -> list[int]:
    """The model's output ids for one source (without BOS and padding, ending in EOS if it finished)."""
    out = translator.generate_ids([src_ids], num_beams, length_penalty, max_new_tokens, head_mask=head_mask)[0]
    return [i for i in out if i != translator.config.pad_id]


def attribute(
    translator,
    text: str,
    method: str = "integrated_gradients",
    steps: int = 32,
    num_beams: int = 4,
    length_penalty: float = 1.0,
    max_new_tokens: int | None = None,
    head_mask=None,
) -> Attribution:
    """Translate `text`, then attribute every target token to the source tokens (see module doc)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("attribute() needs a non-empty German sentence as text")
    model, config = translator.model, translator.config
    src_ids, truncated = translator.encode_source(text)
    tgt_ids = translate_ids(translator, src_ids, num_beams, length_penalty, max_new_tokens, head_mask)
    result = attribute_ids(model, src_ids, tgt_ids, method, steps, head_mask)
    encoder, cross = attention_maps(translator, src_ids, tgt_ids, head_mask)
    source_keep, target_keep = special_token_masks(config, src_ids, tgt_ids)
    per_head, per_layer, counted = agreement(cross, result.scores, source_keep, target_keep)
    rollout = attention_rollout(encoder)
    return Attribution(
        source_tokens=token_strings(translator.tokenizer, src_ids),
        target_tokens=token_strings(translator.tokenizer, tgt_ids),
        translation=translator.decode(tgt_ids),
        method=method,
        steps=steps if method == "integrated_gradients" else 1,
        baseline=BASELINE if method == "integrated_gradients" else "none (input x gradient)",
        scores=result.scores,
        target_logprobs=result.target_logprobs,
        completeness_gap=result.completeness_gap,
        rollout=rollout,
        # Cross-attention reads encoder outputs, not source words: the rollout maps them back,
        # giving a (T, S) map on the same axes as the attribution.
        cross_rollout=cross.mean(axis=1) @ rollout[-1],
        agreement=per_head,
        agreement_mean_heads=per_layer,
        agreement_tokens=counted,
        notes={
            "truncated": truncated,
            "special_tokens_left_out_of_agreement": ["<s>", "</s>", "<pad>"],
            "agreement_attribution": "signed, highest value",
            "rollout_residual": ROLLOUT_RESIDUAL,
        },
    )
