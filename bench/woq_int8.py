"""Weight-only int8 in a compiled graph against fp32, for the decoder step's 19 matrix shapes at one row.

    python bench/woq_int8.py

Random weights of the shipped model's shapes (3 decoder layers: in_proj, out_proj, cross W_Q and W_O,
W1, W2; then the 8000 x 256 output layer), each product x W^T summed so that none is dropped,
compiled as compiled/decoder.py compiles the step (Inductor, C++ wrapper, frozen weights, max_autotune
with its C++ GEMMs); int8 as dequantize-then-linear (w_int8 times a per-row scale), the pattern
Inductor turns into its weight-only int8 kernels. One thread, 300 calls each.
"""

from __future__ import annotations

import time

import torch
import torch._inductor.config as inductor
import torch.nn.functional as F
from torch import nn

SHAPES = [(768, 256), (256, 256), (256, 256), (256, 256), (1024, 256), (256, 1024)] * 3 + [(8000, 256)]


class Products(nn.Module):
    """x times every matrix, in fp32 or int8 with per-row scales."""

    def __init__(self, weights: list[torch.Tensor], int8: bool):
        super().__init__()
        self.int8 = int8
        for i, w in enumerate(weights):
            scale = w.abs().amax(1) / 127
            self.register_buffer(f"w{i}", torch.round(w / scale[:, None]).to(torch.int8) if int8 else w)
            self.register_buffer(f"s{i}", scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = x.new_zeros(())
        for i in range(len(SHAPES)):
            w, scale = getattr(self, f"w{i}"), getattr(self, f"s{i}")
            x_in = x[:, : w.size(1)]
            total = total + ((F.linear(x_in, w.to(x.dtype)) * scale) if self.int8 else F.linear(x_in, w)).sum()
        return total


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    weights = [torch.randn(rows, cols) * 0.05 for rows, cols in SHAPES]
    x = torch.randn(1, 1024)
    settings = dict(
        freezing=True,
        cpp_wrapper=True,
        max_autotune=True,
        max_autotune_gemm_backends="CPP,ATEN",
        autotune_num_choices_displayed=0,
        max_autotune_report_choices_stats=False,
    )
    with inductor.patch(**settings), torch.inference_mode():
        for int8 in (False, True):
            compiled = torch.compile(Products(weights, int8).eval(), fullgraph=True)
            compiled(x)
            start = time.perf_counter()
            for _ in range(300):
                compiled(x)
            ms = (time.perf_counter() - start) / 300 * 1000
            print(f"{'int8' if int8 else 'fp32'}: {ms:.2f} ms for the 19 products at one row")


if __name__ == "__main__":
    main()
