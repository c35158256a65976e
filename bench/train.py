"""Training throughput: our Transformer against torch.nn.Transformer of the same sizes, with the
same shared embedding, positional encoding, tied output projection and label-smoothed loss.
Side by side in one process, interleaved, medians.

    python bench/train.py [--steps 12] [--threads 2] [--precision fp32|bf16]

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
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from model import Transformer, TransformerConfig  # noqa: E402
from model.layers import PositionalEncoding  # noqa: E402

CONFIG = TransformerConfig(vocab_size=8000, d_model=256, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
                           d_ff=1024, dropout=0.1, max_len=256)


class TorchReference(nn.Module):
    """torch.nn.Transformer wrapped with the same embedding, positions and output as ours."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = PositionalEncoding(c.d_model, c.max_len)
        self.dropout = nn.Dropout(c.dropout)
        self.transformer = nn.Transformer(c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff,
                                          c.dropout, batch_first=True)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, src, tgt_in):
        scale = math.sqrt(self.c.d_model)
        x = self.dropout(self.pos(self.embed(src) * scale))
        y = self.dropout(self.pos(self.embed(tgt_in) * scale))
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), dtype=torch.bool)
        src_pad, tgt_pad = src == self.c.pad_id, tgt_in == self.c.pad_id
        out = self.transformer(x, y, tgt_mask=causal, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                               memory_key_padding_mask=src_pad, tgt_is_causal=True)
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
        batches.append((src, tgt[:, :-1], tgt[:, 1:]))
    return batches


def train_step(model, optimizer, batch, bf16: bool) -> int:
    src, tgt_in, tgt_out = batch
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(src, tgt_in)
    loss = F.cross_entropy(logits.float().reshape(-1, CONFIG.vocab_size), tgt_out.reshape(-1),
                           ignore_index=CONFIG.pad_id, label_smoothing=0.1)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return int((tgt_out != CONFIG.pad_id).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-tokens", type=int, default=3072)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    models = {"ours": Transformer(CONFIG), "torch.nn.Transformer": TorchReference(CONFIG)}
    counts = {name: sum(p.numel() for p in m.parameters()) for name, m in models.items()}
    optimizers = {name: torch.optim.Adam(m.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
                  for name, m in models.items()}
    batches = make_batches(args.steps + 2, args.batch_tokens, seed=0)
    bf16 = args.precision == "bf16"
    for name, model in models.items():
        model.train()
        train_step(model, optimizers[name], batches[0], bf16)  # warm-up
    rates = {name: [] for name in models}
    for batch in batches[2:]:
        for name, model in models.items():  # interleaved: the same batch, one after the other
            start = time.perf_counter()
            tokens = train_step(model, optimizers[name], batch, bf16)
            rates[name].append(tokens / (time.perf_counter() - start))
    print(f"{args.steps} training steps each, batches of ~{args.batch_tokens} tokens, {args.threads} thread(s), "
          f"{args.precision}, torch {torch.__version__}")
    for name in models:
        print(f"   {name:22s} {counts[name] / 1e6:.2f} M parameters, {statistics.median(rates[name]):8.0f} target tokens/s")
    ratio = statistics.median(rates["ours"]) / statistics.median(rates["torch.nn.Transformer"])
    print(f"   ours / torch.nn.Transformer: {ratio:.2f}x")


if __name__ == "__main__":
    main()
