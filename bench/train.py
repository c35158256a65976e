"""Training throughput: our Transformer against torch.nn.Transformer of the same sizes, with the
same shared embedding, positional encoding, tied output projection, and the training step of
train.py (label-smoothed loss, clipping, Adam). Side by side in one process, interleaved, medians.

    python bench/train.py [--steps 12] [--threads 2] [--precision fp32|bf16] [--batch-tokens N]

Sizes, batch size and recipe are train.py's translation defaults (training/settings.py).
Batches have the shape of Multi30k batches of --batch-tokens target tokens (lengths 8-30).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import data  # noqa: E402
from model import Transformer, TransformerConfig  # noqa: E402
from model.layers import PositionalEncoding  # noqa: E402
from training.loop import make_optimizer, train_step  # noqa: E402
from training.settings import TrainSettings  # noqa: E402

SETTINGS = TrainSettings(output="", task="translate", max_steps=1).validate()  # the defaults of train.py
CONFIG = SETTINGS.model_config(SETTINGS.vocab_size)


class TorchReference(nn.Module):
    """torch.nn.Transformer wrapped with the same embedding, positions and output as ours."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = PositionalEncoding(c.d_model, c.max_len)
        self.dropout = nn.Dropout(c.dropout)
        self.transformer = nn.Transformer(
            c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff, c.dropout, batch_first=True
        )
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, src, tgt_in):
        scale = math.sqrt(self.c.d_model)
        x = self.dropout(self.pos(self.embed(src) * scale))
        y = self.dropout(self.pos(self.embed(tgt_in) * scale))
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), dtype=torch.bool)
        src_pad, tgt_pad = src == self.c.pad_id, tgt_in == self.c.pad_id
        out = self.transformer(
            x,
            y,
            tgt_mask=causal,
            src_key_padding_mask=src_pad,
            tgt_key_padding_mask=tgt_pad,
            memory_key_padding_mask=src_pad,
            tgt_is_causal=True,
        )
        return self.lm_head(out)


def make_batches(n: int, batch_tokens: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n):
        length = int(torch.randint(8, 31, (1,), generator=gen))
        rows = batch_tokens // length
        src = torch.randint(4, CONFIG.vocab_size, (rows, length), generator=gen)
        tgt = torch.randint(4, CONFIG.vocab_size, (rows, length + 1), generator=gen)
        for row in range(rows):  # ragged ends, as in real batches
            cut = int(torch.randint(length // 2, length + 1, (1,), generator=gen))
            src[row, cut:] = CONFIG.pad_id
            tgt[row, cut + 1 :] = CONFIG.pad_id
        batches.append(data.Batch(src, tgt[:, :-1].contiguous(), tgt[:, 1:].contiguous(), CONFIG.pad_id))
    return batches


def step(model, optimizer, batch: data.Batch, bf16: bool) -> int:
    """train.py's step at a fixed small learning rate; returns the target tokens it trained on."""
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)
    train_step(model, optimizer, batch, 1e-4, SETTINGS.label_smoothing, SETTINGS.clip, autocast)
    return batch.n_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-tokens", type=int, default=SETTINGS.batch_tokens)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    models = {"ours": Transformer(CONFIG), "torch.nn.Transformer": TorchReference(CONFIG)}
    counts = {name: sum(p.numel() for p in m.parameters()) for name, m in models.items()}
    optimizers = {name: make_optimizer(m, SETTINGS) for name, m in models.items()}
    batches = make_batches(args.steps + 2, args.batch_tokens, seed=0)
    bf16 = args.precision == "bf16"
    for name, model in models.items():
        model.train()
        step(model, optimizers[name], batches[0], bf16)  # warm-up
    rates = {name: [] for name in models}
    for batch in batches[2:]:
        for name, model in models.items():  # interleaved: the same batch, one after the other
            start = time.perf_counter()
            tokens = step(model, optimizers[name], batch, bf16)
            rates[name].append(tokens / (time.perf_counter() - start))
    print(
        f"{args.steps} training steps each, batches of ~{args.batch_tokens} tokens, {args.threads} thread(s), "
        f"{args.precision}, torch {torch.__version__}"
    )
    for name in models:
        print(
            f"   {name:22s} {counts[name] / 1e6:.2f} M parameters, {statistics.median(rates[name]):8.0f} target tokens/s"
        )
    ratio = statistics.median(rates["ours"]) / statistics.median(rates["torch.nn.Transformer"])
    print(f"   ours / torch.nn.Transformer: {ratio:.2f}x")


if __name__ == "__main__":
    main()
