"""The two graphs a search runs, as functions of tensors only: EncoderGraph (the encoder, and every
decoder layer's cross-attention keys and values of its output) once a batch, and StepGraph (the
decoder's one-token step: every decoder layer with its cached self-attention, the output projection,
the log-softmax and the search's top-k) once a token. These are what compiled/ahead_of_time.py exports and compiles, and what
compiled/decoder.py calls.

The shapes that change while translating (the rows, the sentences, the source length, the positions
cached) are symbolic in the export (`dynamic_shapes`), within the ranges decoding keeps to, so one
compiled package serves every search of up to MAX_ROWS rows.

Shape legend: L decoder layers, N rows (B sentences x K beams), H heads, C positions cached, S source
length, d_k head width, D model width, V vocabulary.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from generation.step import memory_kv
from model.attention import padding_mask

GROW_STEPS = 16  # the cache buffers grow by this many positions when full, as KVCache does
MAX_ROWS = 16  # searches of more rows stay eager: past ~16 rows the BLAS calls of the eager step win
TOP = 2 * MAX_ROWS  # next tokens the step ranks a row: a search of K beams takes the first 2K, greedy the first


class Linear(nn.Module):
    """x W^T + b with W in fp32, or weight-only int8 (one scale per output row, dequantized in the product:
    the pattern Inductor turns into its int8 kernels)."""

    def __init__(self, weight: Tensor, bias: Tensor | None, int8: bool):
        super().__init__()
        weight = weight.detach()
        self.int8 = int8
        if int8:
            scale = (weight.float().abs().amax(dim=1) / 127.0).clamp_min(1e-8)  # (out,)
            self.register_buffer("weight", torch.round(weight / scale[:, None]).to(torch.int8))
            self.register_buffer("scale", scale.to(weight.dtype))
        else:
            self.register_buffer("weight", weight)
        self.register_buffer("bias", None if bias is None else bias.detach())

    def forward(self, x: Tensor) -> Tensor:
        if not self.int8:
            return F.linear(x, self.weight, self.bias)
        out = F.linear(x, self.weight.to(x.dtype)) * self.scale
        return out if self.bias is None else out + self.bias


class StepLayer(nn.Module):
    """One decoder layer's matrices for the compiled step (the cross-attention's W_Q rows alone), and its norms."""

    def __init__(self, layer: nn.Module, int8: bool):
        super().__init__()
        D = layer.self_attn.d_model
        sa, ca = layer.self_attn, layer.cross_attn
        self.qkv = Linear(sa.in_proj.weight, sa.in_proj.bias, int8)
        self.self_out = Linear(sa.out_proj.weight, sa.out_proj.bias, int8)
        self.cross_q = Linear(ca.in_proj.weight[:D], ca.in_proj.bias[:D], int8)
        self.cross_out = Linear(ca.out_proj.weight, ca.out_proj.bias, int8)
        self.w1 = Linear(layer.ff.linear1.weight, layer.ff.linear1.bias, int8)
        self.w2 = Linear(layer.ff.linear2.weight, layer.ff.linear2.bias, int8)
        self.norms = nn.ModuleList([layer.norm1, layer.norm2, layer.norm3])
        self.norm_first, self.n_heads = layer.norm_first, sa.n_heads

    def residual(self, x: Tensor, i: int, sublayer) -> Tensor:
        """Post-LN norm(x + f(x)) as in the paper, or Pre-LN x + f(norm(x)) (model/layers.py's ResidualLayer)."""
        norm = self.norms[i]
        return x + sublayer(norm(x)) if self.norm_first else norm(x + sublayer(x))

    def self_attention(self, h: Tensor, position: Tensor, keys: Tensor, values: Tensor, past: Tensor) -> Tensor:
        """The newest token h (N, D) over itself and the cached ones (`past` (1, 1, 1, C) masks the rest); its key
        and value are written in at `position`."""
        (N, D), H = h.shape, self.n_heads
        q, k, v = self.qkv(h).view(N, 3, H, D // H).unbind(1)  # (N, H, d_k) each
        keys.index_copy_(2, position, k[:, :, None])
        values.index_copy_(2, position, v[:, :, None])
        out = F.scaled_dot_product_attention(q[:, :, None], keys, values, attn_mask=past)
        return self.self_out(out.reshape(N, D))

    def cross_attention(
        self, h: Tensor, memory_keys: Tensor, memory_values: Tensor, source_bias: Tensor, B: int
    ) -> Tensor:
        """h (N, D) of K = N / B beams per sentence over its sentence's memory (B, H, S, d_k), as K queries."""
        (N, D), H = h.shape, self.n_heads
        q = self.cross_q(h).view(B, N // B, H, D // H).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, memory_keys, memory_values, attn_mask=source_bias)  # (B, H, K, d_k)
        return self.cross_out(out.transpose(1, 2).reshape(N, D))


class EncoderGraph(nn.Module):
    """src (B, S) and its token embeddings (B, S, D) -> memory (B, S, D), memory keys and values
    (L, B, H, S, d_k) of every decoder layer's cross-attention, and the source bias (B, 1, 1, S): 0 on
    tokens, -inf on padding. The model's own encoder code, traced. The embedding table stays out of the
    graph (looked up by the caller): a package holds a copy of every weight in its graph."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model  # only the encoder, the embedding and the cross-attention K/V rows end up in the graph

    def forward(self, src: Tensor, embedded: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        mask = padding_mask(src, self.model.config.pad_id)  # (B, 1, 1, S)
        memory, _ = self.model.encode(src, mask, tap=lambda name, value: embedded if name == "encoder.tokens" else None)
        kv = memory_kv(self.model, memory)
        bias = torch.zeros(mask.shape, dtype=memory.dtype, device=memory.device).masked_fill(~mask, float("-inf"))
        return memory, torch.stack([k for k, _ in kv]), torch.stack([v for _, v in kv]), bias


class StepGraph(nn.Module):
    """One decoder step as a function of tensors only: the thing that is compiled."""

    def __init__(self, model: nn.Module, precision: str = "fp32"):
        super().__init__()
        int8 = precision == "int8"
        self.pe, self.scale = model.pos.pe, math.sqrt(model.config.d_model)  # the embedding table: looked up outside
        self.layers = nn.ModuleList(StepLayer(layer, int8) for layer in model.decoder_layers)
        self.decoder_norm = model.decoder_norm
        self.lm_head = Linear(model.lm_head.weight, model.lm_head.bias, int8)
        self.top = min(TOP, model.config.vocab_size)

    def forward(
        self,
        embedded: Tensor,
        position: Tensor,
        keys: Tensor,
        values: Tensor,
        memory_keys: Tensor,
        memory_values: Tensor,
        source_bias: Tensor,
        banned: Tensor,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """The newest tokens' embeddings (N, D) at `position` (a (1,) tensor: an int would be compiled in) -> the
        logits (N, V), and the
        TOP (at most V) most likely next tokens of every row, best first: their log-probabilities (N, TOP) and ids (N, TOP).
        keys, values (L, N, H, C, d_k): this step's are written at `position`, the positions after it are
        masked; memory_keys, memory_values (L, B, H, S, d_k); source_bias (B, 1, 1, S); banned (V,) is added to
        the logits before ranking: 0, or -inf on the ids the search may not output at this step."""
        B = memory_keys.size(1)
        x = embedded * self.scale + self.pe.index_select(0, position)  # (N, D), as Transformer.embed_tokens
        seen = torch.arange(keys.size(3), device=keys.device) <= position  # (C,): this step and the ones before
        past = (
            torch.zeros(seen.shape, dtype=x.dtype, device=x.device).masked_fill(~seen, float("-inf")).view(1, 1, 1, -1)
        )
        for i, layer in enumerate(self.layers):
            x = layer.residual(x, 0, lambda h: layer.self_attention(h, position, keys[i], values[i], past))
            x = layer.residual(
                x, 1, lambda h: layer.cross_attention(h, memory_keys[i], memory_values[i], source_bias, B)
            )
            x = layer.residual(x, 2, lambda h: layer.w2(F.relu(layer.w1(h))))
        logits = self.lm_head(self.decoder_norm(x))
        allowed = (logits + banned).float()
        top, ids = top_k(allowed, self.top)
        return logits, top - allowed.logsumexp(dim=1, keepdim=True), ids  # log-probabilities, as generation/search.py's


def top_k(x: Tensor, k: int, width: int = 32) -> tuple[Tensor, Tensor]:
    """x.topk(k, dim=1) in two cheap passes: the k largest of a row lie in the k blocks of `width` with the largest
    maxima, so rank the block maxima, then the k * width values of those blocks (ties may come in another order)."""
    N, V = x.shape
    if V <= k * width:
        return x.topk(k, dim=1)
    blocks = F.pad(x, (0, -V % width), value=float("-inf")).view(N, -1, width)  # (N, V / width, width)
    best = blocks.amax(dim=2).topk(k, dim=1).indices  # (N, k)
    values, within = blocks.gather(1, best[:, :, None].expand(-1, -1, width)).reshape(N, k * width).topk(k, dim=1)
    ids = best.gather(1, within // width) * width + within % width
    return values, ids.clamp_max(V - 1)  # a padding place can be drawn only where fewer than k values are finite


def example_inputs(
    model: nn.Module, sentences: int = 2, beams: int = 2, cached: int = GROW_STEPS, source: int = 7
) -> tuple[Tensor, ...]:
    """Made-up inputs of StepGraph.forward: every symbolic size above 1, so that none is specialized."""
    c, p = model.config, next(model.parameters())
    N, L = sentences * beams, c.n_decoder_layers
    keys = p.new_zeros(L, N, c.n_heads, cached, c.d_k)
    memory = p.new_zeros(L, sentences, c.n_heads, source, c.d_k)
    return (
        p.new_zeros(N, c.d_model),
        torch.tensor([2], device=p.device),
        keys,
        keys.clone(),
        memory,
        memory.clone(),
        p.new_zeros(sentences, 1, 1, source),
        p.new_zeros(c.vocab_size),
    )


def dynamic_shapes(model: nn.Module) -> tuple:
    """The symbolic sizes of StepGraph.forward's inputs, with the ranges decoding keeps to."""
    from torch.export import Dim

    longest = model.config.max_len
    N, B = Dim("rows", min=1, max=MAX_ROWS), Dim("sentences", min=1, max=MAX_ROWS)
    C, S = Dim("cached", min=1, max=longest), Dim("source", min=1, max=longest)
    return ({0: N}, None, {1: N, 3: C}, {1: N, 3: C}, {1: B, 3: S}, {1: B, 3: S}, {0: B, 3: S}, None)


def encoder_example_inputs(model: nn.Module, sentences: int = 2, source: int = 9) -> tuple[Tensor, Tensor]:
    """Made-up source ids and embeddings for EncoderGraph.forward, sizes above 1."""
    p = next(model.parameters())
    return (
        torch.full((sentences, source), model.config.eos_id, device=p.device),
        p.new_zeros(sentences, source, model.config.d_model),
    )


def encoder_dynamic_shapes(model: nn.Module) -> tuple:
    from torch.export import Dim

    B, S = Dim("sentences", min=1, max=MAX_ROWS), Dim("source", min=1, max=model.config.max_len)
    return ({0: B, 1: S}, {0: B, 1: S})
