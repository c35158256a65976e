"""Linear layers laid out for generation steps: fp32 as x W + b, oneDNN-packed fp32, and int8.

A step multiplies a few rows (N decoder rows, one token each) by every weight matrix of the
decoder, so its cost is reading the weights and the kernel's fixed overhead, not arithmetic.
Each class is built once from an nn.Linear's weight (out, in) and bias, and called on x (N, in).

- StepLinear: one addmm on the parameter as it is: for the decoder layers' matrices a
  contiguous (in, out) copy measured no faster, and cost 11 MB.
- PackedLinear: W reordered once into oneDNN's blocked layout. For the output layer
  (V x D, the largest matrix) at 2..256 rows it is 1.2-3x faster than MKL's sgemm on the
  AMD CPUs of the free Spaces tier (bench/decode.py); at one row the two are even.
- Int8Linear: weights int8, one scale per output row (symmetric), activations quantized per
  call (torch's fbgemm dynamic quantization): a quarter of the bytes to read. Opt-in: the
  logits move by ~1e-2, so near-ties can flip. The encoder stays fp32 (model/decoding.py).
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

PRECISIONS = ("fp32", "int8")


class StepLinear:
    """x W^T + b as one addmm on the parameter itself (a transposed view, no copy)."""

    def __init__(self, weight: Tensor, bias: Tensor | None):
        self.weight = weight.t()  # (in, out) view of the (out, in) parameter
        self.bias = bias

    def __call__(self, x: Tensor) -> Tensor:
        if self.bias is None:
            return x @ self.weight  # (N, in) -> (N, out)
        return torch.addmm(self.bias, x, self.weight)  # (N, in) -> (N, out)


class PackedLinear:
    """x W^T + b with W in oneDNN's blocked layout (torch's own mkldnn ops, no extension)."""

    def __init__(self, weight: Tensor, bias: Tensor | None):
        self.weight = torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), None)
        self.bias = None if bias is None else bias.detach()

    @staticmethod
    def available(weight: Tensor) -> bool:
        return weight.device.type == "cpu" and weight.dtype == torch.float32 and torch.backends.mkldnn.is_available()

    def __call__(self, x: Tensor) -> Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", [], "")  # (N, out)


class Int8Linear:
    """Dynamic int8: int8 weights (one scale per output row), activations quantized at each call."""

    def __init__(self, weight: Tensor, bias: Tensor | None):
        check_int8_available(weight)
        weight = weight.detach().float()
        scales = (weight.abs().amax(dim=1) / 127.0).clamp_min(1e-8)  # (out,)
        zero_points = torch.zeros(weight.size(0), dtype=torch.long)
        with warnings.catch_warnings():  # torch marks the quantized tensor types deprecated, not the kernels
            warnings.simplefilter("ignore")
            q = torch.quantize_per_channel(weight, scales.double(), zero_points, 0, torch.qint8)
            self.packed = torch.ops.quantized.linear_prepack(q, None if bias is None else bias.detach().float())

    def __call__(self, x: Tensor) -> Tensor:
        # reduce_range: 7-bit activations, so AVX2's int16 accumulation cannot saturate.
        return torch.ops.quantized.linear_dynamic(x, self.packed, True)  # (N, in) -> (N, out)


def check_int8_available(weight: Tensor) -> None:
    """A clear error where torch's int8 CPU kernels (fbgemm, x86) are missing."""
    if weight.device.type != "cpu":
        raise ValueError(f"int8 decoding runs on the CPU; the model is on {weight.device.type}: "
                         "load it with device='cpu'")
    if "fbgemm" not in torch.backends.quantized.supported_engines:
        raise RuntimeError("int8 decoding needs torch's fbgemm kernels (x86 CPUs); this build has "
                           f"{torch.backends.quantized.supported_engines}: use the fp32 model instead")


def step_linear(weight: Tensor, bias: Tensor | None, precision: str = "fp32") -> StepLinear | Int8Linear:
    """The decoder layers' matrices for steps, in `precision` ("fp32" or "int8")."""
    check_precision(precision)
    return Int8Linear(weight, bias) if precision == "int8" else StepLinear(weight, bias)


def output_linear(weight: Tensor, precision: str = "fp32") -> StepLinear | PackedLinear | Int8Linear:
    """The output layer (lm_head, V x D) for steps: int8, else oneDNN-packed where torch has it."""
    check_precision(precision)
    if precision == "int8":
        return Int8Linear(weight, None)
    return PackedLinear(weight, None) if PackedLinear.available(weight) else StepLinear(weight, None)


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
