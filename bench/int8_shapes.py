"""Int8 products against fp32 for every matrix shape of the model, at 1, 4, 64 and 256 rows, one thread.

    python bench/int8_shapes.py [--checkpoint checkpoints/de-en] [--repeats 200]

Each row of the table is one weight matrix of the checkpoint (the attention projections, the feed-forward
pair, the output projection) times a batch of activation rows, timed side by side:
- torch fp32: `x @ W.T` (what the eager step does);
- native fp32 and native int8: the native search's own products (compiled/native/kernels.h), timed inside the
  library (the median of --repeats calls): int8 is CTranslate2's recipe, one scale per weight row (7-bit
  weights), one per activation row quantised on the fly (8 bits), u8 x s8 products summed in int32, both
  scales applied after;
- fbgemm: `torch.ao.nn.quantized.dynamic.Linear` (quantize_dynamic's module: per-row weights, the
  activations quantised per tensor on the fly).
Ratios are against torch fp32 (below 1: faster); the error is the largest absolute difference from fp32 over
the largest fp32 value. (An earlier run also timed `torch._int_mm`: 6-63x slower than fp32 at every shape.)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from compiled.native_search import build, load, product_microseconds  # noqa: E402
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


def fbgemm(w: torch.Tensor):
    from torch.ao.nn.quantized.dynamic import Linear

    linear = Linear(w.shape[1], w.shape[0], bias_=False, dtype=torch.qint8)
    weight = torch.quantize_per_channel(
        w, (w.abs().amax(dim=1).clamp_min(1e-8) / 127), torch.zeros(w.shape[0], dtype=torch.long), 0, torch.qint8
    )
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
    library = load(build(Path(tempfile.mkdtemp(prefix="native-"))))
    print(
        "| Matrix | Rows | torch fp32 µs | native fp32 µs (ratio) | native int8 µs (ratio, error) | fbgemm µs (ratio, error) |"
    )
    print("|---|---|---|---|---|---|")
    for name, w in shapes(translator).items():
        packed = fbgemm(w)
        for rows in ROWS:
            x = torch.randn(rows, w.shape[1])
            reference = x @ w.t()
            fp32 = min(timed(lambda a: a @ w.t(), x, args.repeats) for _ in range(3)) * 1e6
            native32, _ = product_microseconds(library, w, x, False, args.repeats)
            native8, y8 = product_microseconds(library, w, x, True, args.repeats)
            fb = min(timed(packed, x, args.repeats) for _ in range(3)) * 1e6

            def error(y):
                return float((y - reference).abs().max() / reference.abs().max())

            print(
                f"| {name} | {rows} | {fp32:.1f} | {native32:.1f} ({native32 / fp32:.2f}x) | {native8:.1f} "
                f"({native8 / fp32:.2f}x, {error(y8):.3f}) | {fb:.1f} ({fb / fp32:.2f}x, {error(packed(x)):.3f}) |",
                flush=True,
            )


if __name__ == "__main__":
    main()
