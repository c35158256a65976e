"""The lab's Transformer: model/transformer.py's encoder-decoder at toy size, in float64, with switches that build it
differently from the paper (settings.SWITCHES). Its parameters are drawn from the page's generator in the page's order
(ui/static/trainer.js `parameters`), so that the page and this model start from the same numbers; every variant
holds every parameter (a learned position table, final norms, an output matrix of its own), used or not, so that
A and B of an experiment start from the same weights.

Shapes: B sequences of one length L (source) or T (target); D = d_model; H heads of d_k = D / H."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from .random import Mulberry32
from .settings import LabSettings
from .tasks import MAX_LEN, VOCAB

DTYPE = torch.float64


class Draw:
    """Parameters drawn from the generator, in order: Xavier-uniform matrices, zero biases, unit LayerNorm gains,
    N(0, 1/D) embeddings."""

    def __init__(self, random: Mulberry32) -> None:
        self.random = random
        self.made: list[nn.Parameter] = []

    def _param(self, values: list[float], shape: tuple[int, ...]) -> nn.Parameter:
        p = nn.Parameter(torch.tensor(values, dtype=DTYPE).reshape(shape))
        self.made.append(p)
        return p

    def matrix(self, out: int, inputs: int) -> nn.Parameter:
        bound = math.sqrt(6 / (out + inputs))
        return self._param([(2 * self.random() - 1) * bound for _ in range(out * inputs)], (out, inputs))

    def vector(self, n: int, value: float) -> nn.Parameter:
        return self._param([value] * n, (n,))

    def normal(self, rows: int, d: int) -> nn.Parameter:
        return self._param([self.random.normal() / math.sqrt(d) for _ in range(rows * d)], (rows, d))


def sinusoids(length: int, d: int) -> Tensor:
    """PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(...): the paper's table, as the page computes it."""
    pe = torch.zeros(length, d, dtype=DTYPE)
    for p in range(length):
        for i in range(0, d, 2):
            f = math.exp(i * (-math.log(10000) / d))
            pe[p, i], pe[p, i + 1] = math.sin(p * f), math.cos(p * f)
    return pe


class Attention(nn.Module):
    """Multi-head attention with the lab's switches: ÷√d_k or not, heads split by transpose or by view alone."""

    def __init__(self, draw: Draw, d: int) -> None:
        super().__init__()
        self.w_q, self.b_q = draw.matrix(d, d), draw.vector(d, 0)
        self.w_k, self.b_k = draw.matrix(d, d), draw.vector(d, 0)
        self.w_v, self.b_v = draw.matrix(d, d), draw.vector(d, 0)
        self.w_o, self.b_o = draw.matrix(d, d), draw.vector(d, 0)

    def forward(self, queries: Tensor, keys_values: Tensor, s: LabSettings, causal: bool) -> tuple[Tensor, Tensor]:
        q = split_heads(queries @ self.w_q.T + self.b_q, s)
        k = split_heads(keys_values @ self.w_k.T + self.b_k, s)
        v = split_heads(keys_values @ self.w_v.T + self.b_v, s)
        scores = q @ k.transpose(-1, -2)
        if s.scale:
            scores = scores / math.sqrt(q.shape[-1])
        if causal:
            hidden = torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1)
            scores = scores.masked_fill(hidden, float("-inf"))
        weights = scores.softmax(-1)
        return merge_heads(weights @ v, s) @ self.w_o.T + self.b_o, weights


def split_heads(x: Tensor, s: LabSettings) -> Tensor:
    """(B, L, D) → (B, H, L, d_k). `view` alone (the common bug) reads the memory as (B, H, L, d_k), mixing positions."""
    b, length, d = x.shape
    if s.split == "view":
        return x.reshape(b, s.n_heads, length, d // s.n_heads)
    return x.reshape(b, length, s.n_heads, d // s.n_heads).transpose(1, 2)


def merge_heads(x: Tensor, s: LabSettings) -> Tensor:
    b, h, length, dk = x.shape
    if s.split == "view":
        return x.reshape(b, length, h * dk)
    return x.transpose(1, 2).reshape(b, length, h * dk)


class Norm(nn.Module):
    def __init__(self, draw: Draw, d: int) -> None:
        super().__init__()
        self.gain, self.bias = draw.vector(d, 1), draw.vector(d, 0)

    def forward(self, x: Tensor) -> Tensor:
        return nn.functional.layer_norm(x, x.shape[-1:], self.gain, self.bias, 1e-5)


class FeedForward(nn.Module):
    def __init__(self, draw: Draw, d: int) -> None:
        super().__init__()
        self.w_1, self.b_1 = draw.matrix(2 * d, d), draw.vector(2 * d, 0)
        self.w_2, self.b_2 = draw.matrix(d, 2 * d), draw.vector(d, 0)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(x @ self.w_1.T + self.b_1) @ self.w_2.T + self.b_2


def sublayer(x: Tensor, f: Callable[[Tensor], Tensor], norm: Norm, s: LabSettings) -> Tensor:
    """Add & Norm as the switches build it: Post-LN norm(x + f(x)), Pre-LN x + f(norm(x)), or no norm; the
    residual (x +) present or not."""
    if s.norm == "pre":
        out = f(norm(x))
        return x + out if s.residual else out
    out = f(x) + x if s.residual else f(x)
    return norm(out) if s.norm == "post" else out


class EncoderLayer(nn.Module):
    def __init__(self, draw: Draw, d: int) -> None:
        super().__init__()
        self.self_attn, self.ff = Attention(draw, d), FeedForward(draw, d)
        self.norm1, self.norm2 = Norm(draw, d), Norm(draw, d)

    def forward(self, x: Tensor, s: LabSettings) -> Tensor:
        x = sublayer(x, lambda h: self.self_attn(h, h, s, causal=False)[0], self.norm1, s)
        return sublayer(x, self.ff, self.norm2, s)


class DecoderLayer(nn.Module):
    def __init__(self, draw: Draw, d: int) -> None:
        super().__init__()
        self.self_attn, self.cross_attn, self.ff = Attention(draw, d), Attention(draw, d), FeedForward(draw, d)
        self.norm1, self.norm2, self.norm3 = Norm(draw, d), Norm(draw, d), Norm(draw, d)

    def forward(self, y: Tensor, memory: Tensor, s: LabSettings) -> tuple[Tensor, Tensor]:
        y = sublayer(y, lambda h: self.self_attn(h, h, s, causal=s.causal)[0], self.norm1, s)
        seen: list[Tensor] = []

        def cross(h: Tensor) -> Tensor:
            # The paper: queries from the decoder, keys and values from the encoder's memory. Swapped (the
            # tutorials' error): queries from the memory's first T rows, keys and values from the decoder.
            out, weights = (
                self.cross_attn(h, memory, s, causal=False)
                if s.cross == "paper"
                else self.cross_attn(memory[:, : h.shape[1]], h, s, causal=False)
            )
            seen.append(weights)
            return out

        y = sublayer(y, cross, self.norm2, s)
        return sublayer(y, self.ff, self.norm3, s), seen[0]


class LabTransformer(nn.Module):
    """The encoder-decoder of the paper at toy size, built as `settings` says."""

    def __init__(self, s: LabSettings, random: Mulberry32) -> None:
        super().__init__()
        self.s, d, draw = s, s.d_model, Draw(random)
        self.embedding = draw.normal(VOCAB, d)
        self.encoder = nn.ModuleList(EncoderLayer(draw, d) for _ in range(s.n_layers))
        self.decoder = nn.ModuleList(DecoderLayer(draw, d) for _ in range(s.n_layers))
        self.encoder_norm, self.decoder_norm = Norm(draw, d), Norm(draw, d)  # the last norm of a Pre-LN stack
        self.output = draw.normal(VOCAB, d)  # the output layer when it is not tied to the embedding
        self.learned_positions = draw.normal(MAX_LEN, d)
        self.pe: Tensor
        self.register_buffer("pe", sinusoids(MAX_LEN, d), persistent=False)
        self.order = draw.made  # the page's order, for tests/test_lab_parity.py

    def embed(self, ids: Tensor) -> Tensor:
        x = self.embedding[ids] * (math.sqrt(self.s.d_model) if self.s.embed_scale else 1.0)
        length = ids.shape[1]
        if self.s.positions == "sinusoidal":
            x = x + self.pe[:length]
        elif self.s.positions == "learned":
            x = x + self.learned_positions[:length]
        return x

    def encode(self, src: Tensor) -> Tensor:
        x = self.embed(src)
        for layer in self.encoder:
            x = layer(x, self.s)
        return self.encoder_norm(x) if self.s.norm == "pre" else x

    def forward(self, src: Tensor, tgt_in: Tensor) -> tuple[Tensor, list[Tensor]]:
        """Logits (B, T, V) and each decoder layer's cross-attention weights (B, H, T, S)."""
        memory, y, cross = self.encode(src), self.embed(tgt_in), []
        for layer in self.decoder:
            y, weights = layer(y, memory, self.s)
            cross.append(weights)
        if self.s.norm == "pre":
            y = self.decoder_norm(y)
        return y @ (self.embedding if self.s.tied else self.output).T, cross
