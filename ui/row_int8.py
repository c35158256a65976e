"""Weights in int8 with one scale a row, the static site's weights: about a quarter of fp32's bytes (the default
model's 30 MB in fp32 or 14.5 MB in fp16 become 7.6 MB), dequantised in the page (transformer.js) as

    W[r, c] = q[r, c] x scale[r],    q in [-127, 127],    scale[r] = max_c |W[r, c]| / 127

Every matrix is stored so: its int8 numbers under its own name and its scales, fp32, under name + SCALE.
Vectors (biases, LayerNorm's gain and bias) stay fp16. `dequantised` gives the float weights the page computes
with, so that Python scores exactly what the page translates with (bench/site_int8.py: val BLEU against fp32).
"""

from __future__ import annotations

import torch
from torch import Tensor

SCALE = ".row_scale"  # the suffix of a matrix's scales in the weights file
LEVELS = 127  # symmetric: -127..127, so that 0 stays exactly 0 and no row needs an offset


def quantised_rows(weight: Tensor) -> tuple[Tensor, Tensor]:
    """A (rows, cols) matrix as int8 numbers and one fp32 scale a row (an all-zero row gets scale 1)."""
    if weight.dim() != 2:
        raise ValueError(f"only a matrix has rows to quantise, got a tensor of shape {tuple(weight.shape)}")
    w = weight.detach().float().cpu()
    scale = w.abs().amax(dim=1) / LEVELS
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.round(w / scale[:, None]).clamp(-LEVELS, LEVELS).to(torch.int8)
    return q.contiguous(), scale.contiguous()


def int8_weights(weights: dict[str, Tensor]) -> dict[str, Tensor]:
    """Every matrix as int8 with its row scales (name + SCALE), every vector in fp16."""
    out: dict[str, Tensor] = {}
    for name, w in weights.items():
        if name.endswith(SCALE):
            raise ValueError(f"a weight may not be named '{name}': '{SCALE}' marks the scales of a matrix")
        if w.dim() == 2:
            out[name], out[name + SCALE] = quantised_rows(w)
        else:
            out[name] = w.detach().cpu().to(torch.float16).contiguous()
    return out


def dequantised(stored: dict[str, Tensor]) -> dict[str, Tensor]:
    """The fp32 weights the page computes with, from int8_weights' tensors: q x scale a row, vectors as stored."""
    out = {}
    for name, t in stored.items():
        if name.endswith(SCALE):
            continue
        if t.dtype == torch.int8:
            if name + SCALE not in stored:
                raise ValueError(f"int8 matrix '{name}' has no scales ('{name}{SCALE}')")
            out[name] = t.float() * stored[name + SCALE][:, None].float()
        else:
            out[name] = t.float()
    return out


def parameters(stored: dict[str, Tensor]) -> int:
    """The model's parameters in a weights file: every tensor's numbers but the scales."""
    return sum(t.numel() for name, t in stored.items() if not name.endswith(SCALE))


def computing_with(translator, path) -> object:
    """`translator` (translation.Translator) made to compute with a weights file of the site (int8, fp16 or fp32),
    as the page does: its matrices dequantised, the output layer still the embedding. Returns the translator."""
    from safetensors.torch import load_file

    floats = dequantised(load_file(str(path)))
    missing, unexpected = translator.model.load_state_dict(floats, strict=False)
    if unexpected or any(not name.startswith("lm_head.") for name in missing):
        raise ValueError(f"{path} does not fit the model: missing {missing}, unexpected {unexpected}")
    return translator
