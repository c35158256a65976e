"""Who wrote this word: how much of each English token came from each German token, and how much from
the English written before it.

ALTI+ (Ferrando, Gállego, Alastruey, Escolano and Costa-jussà 2022, "Towards Opening the Black Box of
Neural Machine Translation: Source and Target Contributions to the Model's Predictions", arXiv
2205.11631), which extends ALTI (Ferrando, Gállego and Costa-jussà 2022, arXiv 2203.04212) to the
encoder-decoder. Every attention block (attention, residual and LayerNorm) writes its output y_i as a
sum of one vector per input token j,

    T_i(x_j) = LN_i(sum_h alpha_hij W_O^h v_hj  [+ x_i when j = i, the residual]),

where LN_i is the LayerNorm linearized at its actual input (its mean and scale held fixed), so that the
parts add up to y_i exactly, apart from the biases. Token j's share of y_i is how much closer T_i(x_j)
brings one to y_i, max(0, |y_i|_1 - |y_i - T_i(x_j)|_1), normalized over j. A part that points away from
the output counts for nothing, which a plain norm |T_i(x_j)| (Kobayashi et al. 2020) would count in full.

The shares are rolled out over the layers: the encoder's layer matrices are multiplied, German onto
German. Each English position carries a composition over (German tokens, English tokens): decoder
self-attention mixes the compositions of the English positions; cross-attention mixes in the encoder
outputs, each of them the rolled-out mixture of German tokens, while its residual share keeps the
composition the position had. The feed-forward sublayers work on each position alone and are left out
of the mixing, as in ALTI. What it does not show: the LayerNorm is linearized and the biases are not
given to any token, so the shares are a decomposition of the computation, not of the prediction.

Shape legend: S source tokens, T target steps, L rows of a block, M its columns, H heads, D model width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from model.attention import padding_mask, scaled_dot_product_attention, target_mask
from model.heads import HeadMask
from tokenizer import token_strings
from translation.translator import Translator

from .explain import DecodingOptions, decode_one
from .stream import attention_blocks, attention_module, attention_norm, read


@dataclass
class Contributions:
    source_tokens: list[str]
    target_tokens: list[str]  # the pieces written, one per step
    input_tokens: list[str]  # what the decoder read at each step: <s>, then the pieces written before
    source: list[list[float]]  # [step][German token]
    target: list[list[float]]  # [step][input token]: <s> and the English before the step (0 for later ones)
    source_share: list[float]  # [step]: sum of source; 1 - source_share came from the English
    source_share_by_layer: list[list[float]]  # [decoder layer][step]: the same after each decoder layer
    encoder: list[list[float]]  # [German token][German token]: the encoder's rolled-out mixing
    cross_attention: list[list[float]]  # [step][German token]: the cross-attention map, mean of layers and heads
    agreement: float  # mean overlap (sum of minima) of the source shares, renormalized, with that map
    same_top: float  # share of steps where both put the same German token first

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def parts_of_block(
    attention,
    norm,
    x: torch.Tensor,
    memory: torch.Tensor | None,
    mask: torch.Tensor,
    norm_first: bool,
    heads: torch.Tensor | None = None,
):
    """One attention block on x (L, D) -> its output (L, D), which the parts decompose, its weights (H, L, M)
    and the parts T_i(x_j) (L, M, D; cross-attention: M + 1, the residual last)."""
    h = norm(x) if norm_first else x
    if memory is None:
        q, k, v = attention.project_qkv(h[None])  # (1, H, L, d_k) each
    else:
        q, (k, v) = attention.project_query(h[None]), attention.project_memory(memory[None])
    _, weights = scaled_dot_product_attention(q, k, v, mask, need_weights=True)  # (1, H, L, M)
    assert weights is not None  # need_weights
    weights = weights[0] if heads is None else weights[0] * heads.view(-1, 1, 1)
    D, H = x.size(-1), attention.n_heads
    w_o = attention.out_proj.weight.view(D, H, attention.d_k)  # W_O, its columns grouped by head
    parts = torch.einsum("hlm,hmf->lmf", weights, torch.einsum("hmk,fhk->hmf", v[0], w_o))  # (L, M, D)
    if memory is None:  # self-attention: the residual is the row's own token
        rows = torch.arange(x.size(0))
        parts[rows, rows] += x
    else:
        parts = torch.cat([parts, x[:, None]], dim=1)
    before = parts.sum(1) + attention.out_proj.bias  # (L, D): x + attention(x), the LayerNorm's input
    if norm_first:
        return before, weights, parts
    scale = torch.rsqrt(before.var(-1, unbiased=False, keepdim=True) + norm.eps)  # (L, 1): held fixed
    parts = (parts - parts.mean(-1, keepdim=True)) * (scale * norm.weight)[:, None]
    output = F.layer_norm(before, norm.normalized_shape, norm.weight, norm.bias, norm.eps)
    return output, weights, parts


def shares_of(parts: torch.Tensor, output: torch.Tensor) -> torch.Tensor:
    """ALTI's contributions: max(0, |y|_1 - |y - T_j|_1), normalized over j: (L, M)."""
    closer = (output.abs().sum(-1, keepdim=True) - (output[:, None] - parts).abs().sum(-1)).clamp(min=0)
    return closer / closer.sum(-1, keepdim=True).clamp(min=1e-12)


def encoder_rollout(model, src: torch.Tensor, head_mask: HeadMask | None, seen: dict):
    """The encoder on src (1, S) -> memory (S, D), the rolled-out shares (S, S) and the source mask, from its
    streams `seen` (read by decoder_rollout's one pass)."""
    blocks = attention_blocks(model.config, "encoder")
    mask = padding_mask(src, model.config.pad_id)
    rollout = torch.eye(src.size(1), dtype=seen["encoder.out"].dtype, device=src.device)
    for block in blocks:
        x, _, parts = block_parts(model, block, seen[block.before][0], None, mask, head_mask)
        rollout = shares_of(parts, x) @ rollout
    return seen["encoder.out"][0], rollout, mask


def block_parts(
    model, block, x: torch.Tensor, memory: torch.Tensor | None, mask: torch.Tensor, head_mask: HeadMask | None
):
    """parts_of_block for one of lens/stream.py's blocks, its stream before it x (L, D)."""
    heads = None if head_mask is None else getattr(head_mask, block.kind)[block.layer]
    return parts_of_block(
        attention_module(model, block.kind, block.layer),
        attention_norm(model, block.kind, block.layer),
        x,
        memory,
        mask,
        model.config.norm_first,
        heads,
    )


def decoder_rollout(model, src: torch.Tensor, tgt: torch.Tensor, head_mask: HeadMask | None = None):
    """The whole model on src (1, S) and tgt (1, T), decomposed: the logits (T, V), the compositions
    (T, S + T), the source share after each decoder layer (layers, T), the encoder's shares (S, S) and
    the cross-attention maps (layers, H, T, S)."""
    blocks = attention_blocks(model.config, "decoder")
    names = [b.before for b in blocks + attention_blocks(model.config, "encoder")] + ["encoder.out"]
    seen, logits = read(model, src, tgt, names, head_mask)  # one pass for both stacks
    assert logits is not None  # tgt is given
    memory, rollout, src_mask = encoder_rollout(model, src, head_mask, seen)
    tgt_mask = target_mask(tgt, model.config.pad_id)
    S, T = memory.size(0), tgt.size(1)
    composition = torch.cat([memory.new_zeros(T, S), torch.eye(T, dtype=memory.dtype, device=memory.device)], dim=1)
    by_layer, maps = [], []
    for block in blocks:
        cross = block.kind == "cross"
        y, weights, parts = block_parts(
            model, block, seen[block.before][0], memory if cross else None, src_mask if cross else tgt_mask, head_mask
        )
        shares = shares_of(parts, y)
        if not cross:
            composition = shares @ composition
            continue
        # (T, S + 1): the encoder outputs, then the residual, which keeps the composition the position had
        composition = shares[:, -1:] * composition + F.pad(shares[:, :-1] @ rollout, (0, T))
        by_layer.append(composition[:, :S].sum(-1))
        maps.append(weights)
    return logits[0], composition, torch.stack(by_layer), rollout, torch.stack(maps)


def agreement_with(source: torch.Tensor, cross: torch.Tensor) -> tuple[float, float]:
    """Mean overlap and same-first share of the source shares (T, S), renormalized, and the map (T, S)."""
    shares = source / source.sum(-1, keepdim=True).clamp(min=1e-12)
    overlap = torch.minimum(shares, cross).sum(-1).mean()
    return float(overlap), float((shares.argmax(-1) == cross.argmax(-1)).float().mean())


@torch.inference_mode()
def contributions(
    translator: Translator,
    text: str,
    options: DecodingOptions | None = None,
    head_mask: HeadMask | None = None,
    prefix=None,
) -> Contributions:
    """Translate one sentence (starting with `prefix` when given), then decompose every English token into
    German and English shares (ALTI+)."""
    sentence = decode_one(translator, text, options, prefix=prefix)
    model, device = translator.model, translator.device
    src = torch.tensor([sentence.source_ids], device=device)
    tgt = torch.tensor([sentence.input_ids], device=device)
    if head_mask is not None:
        head_mask = head_mask.to(device, model.embed.weight.dtype)
    _, composition, by_layer, rollout, maps = decoder_rollout(model, src, tgt, head_mask)
    composition, S = composition.float(), src.size(1)
    cross = maps.float().mean((0, 1))  # (T, S)
    agreement, same_top = agreement_with(composition[:, :S], cross)

    def rounded(t: torch.Tensor) -> list:
        return torch.round(t.float(), decimals=4).tolist()

    names = translator.tokenizer
    return Contributions(
        token_strings(names, sentence.source_ids),
        token_strings(names, sentence.output_ids),
        token_strings(names, sentence.input_ids),
        rounded(composition[:, :S]),
        rounded(composition[:, S:]),
        rounded(composition[:, :S].sum(-1)),
        rounded(by_layer),
        rounded(rollout),
        rounded(cross),
        round(agreement, 4),
        round(same_top, 4),
    )
