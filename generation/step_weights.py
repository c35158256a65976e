"""The decoder's matrices laid out for one-token steps: built once per set of weights, kept beside the model.

A decoding step multiplies a few rows by every decoder matrix, so how the matrices lie in memory
and in which precision decide its speed (generation/step_linear.py). `step_weights(model, precision)`
builds that layout once and rebuilds it only when a parameter changes (a training step,
load_state_dict or .to(); a write through `param.data` does not count: write to the parameter under
torch.no_grad()). The layouts are kept beside the model, not on it: they are no parameters, and a
deepcopy or pickle of the model should neither carry nor fail on them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.layers import DecoderLayer
from model.transformer import Transformer

from .step_linear import StepMatrix, check_precision, step_linear

_DERIVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class StepLayerNorm:
    """An nn.LayerNorm called without the module machinery: steps are short, and call it nine times."""

    def __init__(self, norm: nn.LayerNorm):
        self.shape, self.weight, self.bias, self.eps = norm.normalized_shape, norm.weight, norm.bias, norm.eps

    def __call__(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.shape, self.weight, self.bias, self.eps)


@dataclass
class DecoderStepWeights:
    """A decoder layer's parameters for steps: (input projection, W_O) of each attention, (W1, W2), norms 1-3."""

    self_attn: tuple[StepMatrix, StepMatrix]
    cross_attn: tuple[StepMatrix, StepMatrix]
    ff: tuple[StepMatrix, StepMatrix]
    norms: list[StepLayerNorm]


@dataclass
class StepWeights:
    """The decoder's matrices laid out for one-token steps, in one precision."""

    layers: list[DecoderStepWeights]
    lm_head: Callable[[Tensor], Tensor]  # (N, D) -> (N, V): a step_linear.py layer, or a shortlist's (shortlist.py)


def attention_weights(attention, precision: str) -> tuple[StepMatrix, StepMatrix]:
    """The input projection (W_Q alone for cross-attention) and W_O of one attention module."""
    D = attention.d_model
    rows = slice(0, D) if attention.cross else slice(0, 3 * D)
    return (
        step_linear(attention.in_proj.weight[rows], attention.in_proj.bias[rows], precision),
        step_linear(attention.out_proj.weight, attention.out_proj.bias, precision),
    )


def layer_weights(layer, precision: str) -> DecoderStepWeights:
    """One decoder layer's matrices for steps."""
    ff = (
        step_linear(layer.ff.linear1.weight, layer.ff.linear1.bias, precision),
        step_linear(layer.ff.linear2.weight, layer.ff.linear2.bias, precision),
    )
    return DecoderStepWeights(
        attention_weights(layer.self_attn, precision),
        attention_weights(layer.cross_attn, precision),
        ff,
        [StepLayerNorm(n) for n in (layer.norm1, layer.norm2, layer.norm3)],
    )


def step_weights(model: Transformer, precision: str = "fp32") -> StepWeights:
    """The decoder's matrices for steps in `precision` ("fp32" or "int8"), built once and kept until a parameter changes."""
    check_precision(precision)
    return derived(
        model,
        ("step", precision),
        lambda: StepWeights(
            [layer_weights(layer, precision) for layer in model.decoder_layers],
            step_linear(model.lm_head.weight, model.lm_head.bias, precision),
        ),
    )


def parameter_versions(model: nn.Module) -> tuple:
    """Where each parameter lies and how often it was written: changed by training, load_state_dict or .to()."""
    return tuple((p.data_ptr(), p._version) for p in model.parameters())


def derived(model: nn.Module, key: tuple, build):
    """What `build` makes of the model's parameters, rebuilt only when one of them has changed."""
    source = parameter_versions(model)
    built = _DERIVED.setdefault(model, {})
    if key not in built or built[key][0] != source:
        with torch.no_grad():
            built[key] = (source, build())
    return built[key][1]


def store_decoder_transposed(model: Transformer) -> None:
    """Keep each decoder matrix in memory as W^T, (in, out) row-major; shapes and values stay.

    Steps then multiply by the matrices where they lie (generation/step_linear.py) instead of by copies:
    11 MB less for the shipped model. Translator.from_pretrained does this on a CPU.
    """
    with torch.no_grad():
        for layer in cast(Iterable[DecoderLayer], model.decoder_layers):  # Transformer builds them of DecoderLayer only
            for linear in (
                layer.self_attn.in_proj,
                layer.self_attn.out_proj,
                layer.cross_attn.in_proj,
                layer.cross_attn.out_proj,
                layer.ff.linear1,
                layer.ff.linear2,
            ):
                linear.weight.data = linear.weight.data.t().contiguous().t()  # (out, in), strides (1, out)
