"""What a wider model would cost to run: decoding time and size at d_model 256 (today's), 384 and 512.

    python bench/width.py [--repeats 7] [--threads 1]

Three models of the shipped shape but for the width (3 + 3 layers, 64 dimensions a head, d_ff = 4 d_model,
the everyday checkpoint's vocabulary), random weights: each translates the same source, 24 new tokens forced
(min_new_tokens = max_new_tokens, so every width writes as many), greedy at batch 1 and beam 5, timed in turns
(interleaved medians, one process). The figures are ratios against d_model 256, the cost a wider default would
put on every sentence of the Space; the size is the fp32 safetensors the checkpoint would ship.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from generation import generate  # noqa: E402
from model import Transformer, TransformerConfig  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import ROOT, interleaved  # noqa: E402

WIDTHS = (256, 384, 512)
SOURCE_PIECES, NEW_TOKENS = 16, 24  # a sentence of about 12 words, and its English


def model_of_width(d_model: int, vocab_size: int) -> Transformer:
    config = TransformerConfig(
        vocab_size=vocab_size,
        d_model=d_model,
        n_heads=d_model // 64,
        n_encoder_layers=3,
        n_decoder_layers=3,
        d_ff=4 * d_model,
        dropout=0.0,
        max_len=256,
        pad_id=0,
        bos_id=1,
        eos_id=2,
    )
    torch.manual_seed(0)
    return Transformer(config).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--checkpoint",
        default=str(ROOT / "checkpoints" / "de-en-everyday"),
        help="the checkpoint whose vocabulary size the models take",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    vocab = json.loads((Path(args.checkpoint) / "config.json").read_text())["vocab_size"]
    models = {d: model_of_width(d, vocab) for d in WIDTHS}
    src = torch.randint(3, vocab, (1, SOURCE_PIECES), generator=torch.Generator().manual_seed(1))
    rows = {}
    for beams in (1, 5):
        with torch.inference_mode():
            times = interleaved(
                {
                    d: (
                        lambda m=m: generate(
                            m, src, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, num_beams=beams
                        )
                    )
                    for d, m in models.items()
                },
                args.repeats,
            )
        rows[beams] = times
    print(
        f"vocabulary {vocab}, {SOURCE_PIECES} source pieces, {NEW_TOKENS} new tokens, {args.threads} thread(s), "
        f"medians of {args.repeats}"
    )
    print("| d_model | parameters | fp32 weights | greedy ms a sentence | vs 256 | beam 5 ms a sentence | vs 256 |")
    print("|---|---|---|---|---|---|---|")
    for d, m in models.items():
        params = sum(p.numel() for p in m.parameters())
        g, b = rows[1][d] * 1e3, rows[5][d] * 1e3
        print(
            f"| {d} | {params / 1e6:.1f}M | {params * 4 / 2**20:.0f} MB | {g:.1f} | {g / (rows[1][256] * 1e3):.2f}x | "
            f"{b:.1f} | {b / (rows[5][256] * 1e3):.2f}x |"
        )


if __name__ == "__main__":
    main()
