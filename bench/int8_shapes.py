"""Int8 products against fp32 for every matrix shape of the model, at 1, 4, 64 and 256 rows, one thread.

    python bench/int8_shapes.py [--checkpoint checkpoints/de-en] [--repeats 200]

Each row of the table is one weight matrix of the checkpoint (the attention projections, the feed-forward
pair, the output projection) times a batch of activation rows, timed side by side, interleaved:
- fp32: `x @ W.T` (what the eager and compiled steps do);
- int8 `_int_mm`: CTranslate2's recipe by hand: one scale per weight row (absmax / 127, once), one per
  activation row quantised on the fly, `torch._int_mm` (int8 x int8 -> int32), then both scales applied;
- int8 fbgemm: `torch.ao.nn.quantized.dynamic.Linear` (quantize_dynamic's module: per-row weights, the
  activations quantised per tensor on the fly).
The ratio is int8 time / fp32 time (below 1: int8 is faster); the error is the largest absolute difference
from fp32 over the largest fp32 value.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from translation import Translator  # noqa: E402

ROWS = (1, 4, 64, 256)


def shapes(translator: Translator) -> dict[str, torch.Tensor]:
    """One weight of each shape the decoder step multiplies by: name -> (out, in)."""
    layer = translator.model.decoder_layers[0]
    named = dict(layer.named_parameters())
    weights = {name: p.detach() for name, p in named.items() if p.dim() == 2}
    picked = {}
    for name, w in weights.items():
        picked.setdefault(tuple(w.shape), (name, w))
    out = {f"decoder layer 1 {name} {tuple(w.shape)}": w for name, w in picked.values()}
    lm = translator.model.lm_head.weight.detach()
    out[f"output projection {tuple(lm.shape)}"] = lm
    return out


class Int8ByHand:
    """W (out, in) as int8 with one scale per row; x quantised per row on the fly; torch._int_mm."""

    def __init__(self, w: torch.Tensor):
        self.scale = w.abs().amax(dim=1).clamp_min(1e-8) / 127  # (out,)
        self.q = torch.round(w / self.scale[:, None]).to(torch.int8).t().contiguous()  # (in, out)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        x_scale = x.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 127  # (rows, 1)
        xq = torch.round(x / x_scale).to(torch.int8)
        return torch._int_mm(xq, self.q).float() * x_scale * self.scale


def fbgemm(w: torch.Tensor):
    from torch.ao.nn.quantized.dynamic import Linear

    linear = Linear(w.shape[1], w.shape[0], bias_=False, dtype=torch.qint8)
    weight = torch.quantize_per_channel(w, (w.abs().amax(dim=1).clamp_min(1e-8) / 127), torch.zeros(w.shape[0], dtype=torch.long), 0, torch.qint8)
    linear.set_weight_bias(weight, None)
    return linear


def timed(fn, x, repeats: int) -> float:
    fn(x)
    start = time.perf_counter()
    for _ in range(repeats):
        fn(x)
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    print("| Matrix | Rows | fp32 µs | int8 _int_mm µs (ratio, error) | int8 fbgemm µs (ratio, error) |")
    print("|---|---|---|---|---|")
    for name, w in shapes(translator).items():
        by_hand, packed = Int8ByHand(w), fbgemm(w)
        for rows in ROWS:
            x = torch.randn(rows, w.shape[1])
            fp32 = lambda a: a @ w.t()  # noqa: E731
            reference = fp32(x)
            cells = []
            times = {}
            for label, fn in (("fp32", fp32), ("int_mm", by_hand), ("fbgemm", packed)):
                times[label] = min(timed(fn, x, args.repeats) for _ in range(3))
            for label, fn in (("int_mm", by_hand), ("fbgemm", packed)):
                error = float((fn(x) - reference).abs().max() / reference.abs().max())
                cells.append(f"{times[label] * 1e6:.1f} ({times[label] / times['fp32']:.2f}x, {error:.3f})")
            print(f"| {name} | {rows} | {times['fp32'] * 1e6:.1f} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
