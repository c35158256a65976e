"""Why X and not Y: the logit difference between the word written and an alternative, where it comes from.

At one step of a translation, the model preferred the piece it wrote (X) over another (Y) by
logit_diff = z_X - z_Y. `contrast()` attributes that difference to each German token with
integrated gradients (Sundararajan et al. 2017) on the source embeddings, the contrastive form of
inseq's contrast_prob_diff (Yin & Neubig 2022): the attributions sum to logit_diff minus the
baseline's logit_diff (the zero source embedding), up to the quadrature error reported. It also
gives the effect of switching off each attention head on the difference.

The path needs many steps: on the shipped model the integrand is rough (Post-LN LayerNorm over a
source that fades to nothing), and the sum over 8, 32, 128 and 256 midpoint steps came to 0.7,
13.7, 5.2 and 7.06 for a difference of 7.00; 256 steps (the default) run as one batch.

The source embeddings are passed in explicitly (no hooks on the shared model), so concurrent calls
do not see each other's inputs.

Shape legend: R rows (interpolation steps), S source tokens, t target prefix, D model width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.attention import padding_mask
from model.heads import KINDS, HeadMask
from tokenizer import token_strings
from translation.translator import Translator

from . import cost
from .cost import checked_whole
from .explain import DecodingOptions, decode_one
from .stream import standing_in

ROWS = 32  # path points in one pass, at most (fewer for long sentences: cost.rows_per_chunk)


@dataclass
class Contrast:
    step: int  # counted from 1
    chosen: str  # the piece written at that step
    alternative: str  # the piece it is compared with, labelled as the other pieces ("▁cat": a word's first piece)
    logit_diff: float
    baseline_logit_diff: float  # with the zero source embedding
    source_tokens: list[str]
    source_attribution: list[float]  # per German token; sums to logit_diff - baseline_logit_diff
    completeness_gap: float  # sum(source_attribution) - (logit_diff - baseline_logit_diff)
    heads: dict[str, list[list[float]]]  # kind -> [layer][head]: logit_diff with that head off, minus logit_diff

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def alternative_id(translator: Translator, alternative) -> tuple[int, str]:
    """The piece an English word or piece names: the piece itself, else the first piece of " word"."""
    if not isinstance(alternative, str) or not alternative.strip():
        raise ValueError(f"alternative must be an English word or piece, got {alternative!r}")
    tokenizer = translator.tokenizer
    for candidate in (alternative, "\u0120" + alternative.strip()):  # byte-level BPE marks a leading space with Ġ
        if (found := tokenizer.token_to_id(candidate)) is not None:
            return found, token_strings(tokenizer, [found])[0]  # its label, as every other piece is named
    ids = tokenizer.encode(" " + alternative.strip(), add_special_tokens=False).ids
    if not ids:
        raise ValueError(f"alternative {alternative!r} has no pieces")
    return ids[0], token_strings(tokenizer, ids[:1])[0]


def logit_difference(
    model,
    src: torch.Tensor,
    source_embedding: torch.Tensor,
    prefix: torch.Tensor,
    chosen: int,
    alternative: int,
    head_mask: HeadMask | None = None,
) -> torch.Tensor:
    """z_chosen - z_alternative after `prefix` (1, t), for each of R source embeddings (R, S, D): (R,)."""
    R = source_embedding.size(0)
    src = src.expand(R, -1)
    src_mask = padding_mask(src, model.config.pad_id)
    memory, _ = model.encode(src, src_mask, head_mask=head_mask, tap=standing_in(source_embedding))
    hidden, _, _ = model.decode(prefix.expand(R, -1), memory, src_mask, head_mask=head_mask)  # (R, t, D)
    logits = model.lm_head(hidden[:, -1])  # (R, V)
    return logits[:, chosen].float() - logits[:, alternative].float()


def path_rows(config, S: int, t: int) -> int:
    """Path points in one pass: the backward pass keeps every attention sublayer's scores, so a chunk holds
    (L_enc + 2 L_dec) x 2 of a replay's largest tensors."""
    saved = 2 * (config.n_encoder_layers + 2 * config.n_decoder_layers)
    return min(ROWS, cost.rows_per_chunk(saved * cost.run_cells(config, S, t)))


def check_contrast_work(config, S: int, t: int, steps: int) -> None:
    """The contrast budget: the path (a forward and a backward pass, about 3 replays a point) and the head runs."""
    runs = 3 * steps + 2 + 3 * config.n_decoder_layers * config.n_heads
    cost.check_work(cost.CONTRAST_WORK, cost.replay_work(config, runs, S, t))


def contrast(
    translator: Translator,
    text: str,
    step: int,
    alternative: str,
    options: DecodingOptions | None = None,
    steps: int = 256,
) -> Contrast:
    """Why the piece at `step` (from 1) of the translation of `text` and not `alternative`."""
    sentence = decode_one(translator, text, options)
    T = len(sentence.output_ids)
    step = checked_whole(step, "step", 1, T, " (the pieces of the translation)")
    check_contrast_work(translator.config, len(sentence.source_ids), step, steps)
    other, other_piece = alternative_id(translator, alternative)
    chosen = sentence.output_ids[step - 1]
    model, device = translator.model, translator.device
    src = torch.tensor([sentence.source_ids], device=device)  # (1, S)
    prefix = torch.tensor([sentence.input_ids[:step]], device=device)  # (1, t): BOS + what was written before
    with torch.no_grad():
        x = model.embed(src)  # (1, S, D)
        ends = logit_difference(model, src, torch.cat([x, torch.zeros_like(x)]), prefix, chosen, other)
        mask_on = HeadMask.all_on(translator.config).to(device, x.dtype)
        heads = {
            kind: [
                [
                    float(
                        logit_difference(model, src, x, prefix, chosen, other, mask_on.switched_off(kind, layer, head))[
                            0
                        ]
                        - ends[0]
                    )
                    for head in range(translator.config.n_heads)
                ]
                for layer in range(getattr(mask_on, kind).size(0))
            ]
            for kind in KINDS
        }
    alphas = (torch.arange(steps, device=device, dtype=x.dtype) + 0.5) / steps  # the midpoint rule
    grads = torch.zeros_like(x[0])  # (S, D): the path's gradients summed, a few points at a time (bounded memory)
    with torch.enable_grad():
        for chunk in alphas.split(path_rows(translator.config, src.size(1), prefix.size(1))):
            path = (chunk[:, None, None] * x).requires_grad_(True)  # (r, S, D): from the zero embedding to x
            grads += torch.autograd.grad(logit_difference(model, src, path, prefix, chosen, other).sum(), path)[0].sum(
                0
            )
    scores = (grads / steps * x[0]).sum(-1)  # (S,)
    target = float(ends[0] - ends[1])
    return Contrast(
        step,
        token_strings(translator.tokenizer, [chosen])[0],
        other_piece,
        float(ends[0]),
        float(ends[1]),
        token_strings(translator.tokenizer, sentence.source_ids),
        scores.tolist(),
        float(scores.sum()) - target,
        heads,
    )
