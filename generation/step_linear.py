"""Linear layers laid out for generation steps: fp32 through numpy's BLAS or torch's, and int8.

A step multiplies a few rows (N decoder rows, one token each) by every weight matrix of the
decoder, so its cost is reading the weights and the kernel's fixed overhead, not arithmetic.
Each class is built once from an nn.Linear's weight (out, in) and bias, and called on x (N, in).

- BlasLinear (fp32 on the CPU): W^T as (in, out) rows, multiplied by numpy's BLAS (OpenBLAS,
  in numpy's own wheels) on the tensors' memory. On the AMD CPUs of the free Spaces tier
  torch's MKL sgemm is about 2x slower at 1-4 rows and 1.25x at 96-256 (bench/decode_levers.py).
  A matrix stored transposed already (Transformer.store_decoder_transposed) is used where it
  lies; any other is copied once (the tied 8000 x 256 output layer: 8 MB).
- StepLinear: one addmm on the parameter as it is (a transposed view): other devices and dtypes.
- Int8Linear: weights int8, one scale per output row (symmetric), activations quantized per
  call (torch's fbgemm dynamic quantization): a quarter of the bytes to read. Opt-in: the
  logits move by ~1e-2, so near-ties can flip. The encoder stays fp32 (generation/search.py).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
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


class BlasLinear:
    """x W^T + b as numpy's matmul on W^T's (in, out) rows, in place or copied; x and the result stay tensors."""

    def __init__(self, weight: Tensor, bias: Tensor | None):
        weight_t = weight.detach().t()  # (in, out)
        # Stored transposed already (Transformer.store_decoder_transposed): used in place, rows apart or not.
        self.weight = (weight_t if weight_t.stride(1) == 1 else weight_t.contiguous()).numpy()
        self.bias = None if bias is None else bias.detach().numpy().copy()

    @staticmethod
    def available(weight: Tensor) -> bool:
        return weight.device.type == "cpu" and weight.dtype == torch.float32

    def __call__(self, x: Tensor) -> Tensor:
        out = np.matmul((x.detach() if x.requires_grad else x).numpy(), self.weight)  # (N, in) -> (N, out)
        if self.bias is not None:
            out += self.bias  # in numpy: a torch add_ costs twice the call overhead
        return torch.from_numpy(out)


@functools.cache
def _blas_pools() -> list:
    """numpy's BLAS thread pools (threadpoolctl), or none where threadpoolctl is missing."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return []
    return list(ThreadpoolController().select(user_api="blas").lib_controllers)


def single_threaded_blas() -> None:
    """numpy's BLAS on one thread, whatever torch's count: its threads and torch's OpenMP threads
    both spin while they wait, and on 2 cores two pools of 2 made beam search 10x slower."""
    for pool in _blas_pools():
        if pool.num_threads != 1:
            pool.set_num_threads(1)


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
        raise ValueError(
            f"int8 decoding runs on the CPU; the model is on {weight.device.type}: load it with device='cpu'"
        )
    if "fbgemm" not in torch.backends.quantized.supported_engines:
        raise RuntimeError(
            "int8 decoding needs torch's fbgemm kernels (x86 CPUs); this build has "
            f"{torch.backends.quantized.supported_engines}: use the fp32 model instead"
        )


StepMatrix = StepLinear | BlasLinear | Int8Linear  # what step_linear builds: each maps x (N, in) -> (N, out)


def step_linear(weight: Tensor, bias: Tensor | None, precision: str = "fp32") -> StepMatrix:
    """A matrix of the decoder (layers and output layer) for steps, in `precision` ("fp32" or "int8")."""
    check_precision(precision)
    if precision == "int8":
        return Int8Linear(weight, bias)
    return BlasLinear(weight, bias) if BlasLinear.available(weight) else StepLinear(weight, bias)


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
