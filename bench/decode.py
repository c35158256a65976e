"""Decoding speed, measured side by side in one process, interleaved, medians, one thread.

    pip install -r requirements-bench.txt
    python bench/decode.py [--repeats 7]

1. Cached greedy decoding against re-running the decoder over the whole prefix at every step,
   at 48 and 128 new tokens (same tokens required).
2. Against Hugging Face transformers' MarianMTModel.generate, built from a MarianConfig of the
   same size with random weights (nothing is downloaded): greedy per-token time at batch 1, and
   sentences per second with beam 4 over a batch of 64.
Lengths are fixed with min_new_tokens = max_new_tokens so both sides produce the same number of
tokens whatever their random weights prefer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from model import Transformer, TransformerConfig  # noqa: E402

SIZE = dict(vocab_size=8000, d_model=256, n_heads=4, n_encoder_layers=3, n_decoder_layers=3, d_ff=1024,
            dropout=0.0, max_len=256, pad_id=0, bos_id=1, eos_id=2)


def marian_model():
    from transformers import MarianConfig, MarianMTModel

    config = MarianConfig(
        vocab_size=SIZE["vocab_size"], d_model=SIZE["d_model"], encoder_layers=SIZE["n_encoder_layers"],
        decoder_layers=SIZE["n_decoder_layers"], encoder_attention_heads=SIZE["n_heads"],
        decoder_attention_heads=SIZE["n_heads"], encoder_ffn_dim=SIZE["d_ff"], decoder_ffn_dim=SIZE["d_ff"],
        max_position_embeddings=SIZE["max_len"], activation_function="relu", scale_embedding=True,
        pad_token_id=SIZE["pad_id"], eos_token_id=SIZE["eos_id"], decoder_start_token_id=SIZE["bos_id"],
        forced_eos_token_id=None, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
    )
    return MarianMTModel(config).eval()


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(candidates: dict, repeats: int) -> dict[str, float]:
    """Median seconds of each candidate, run in turns so that machine noise hits all alike."""
    times = {name: [] for name in candidates}
    for fn in candidates.values():
        fn()  # warm-up
    for _ in range(repeats):
        for name, fn in candidates.items():
            times[name].append(timed(fn))
    return {name: statistics.median(values) for name, values in times.items()}


def sources(batch: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(4, SIZE["vocab_size"], (batch, length), generator=gen)
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=gen)
    for row, n in enumerate(lengths.tolist()):
        src[row, n - 1] = SIZE["eos_id"]
        src[row, n:] = SIZE["pad_id"]
    return src, (src != SIZE["pad_id"]).long()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    ours = Transformer(TransformerConfig(**SIZE)).eval()
    print(f"model: {SIZE}, torch {torch.__version__}, 1 thread")

    print("\n1. KV cache: cached greedy vs re-running the decoder over the prefix (batch 1)")
    src, _ = sources(1, 24, seed=1)
    for n in (48, 128):
        cached = lambda: ours.generate(src, max_new_tokens=n, min_new_tokens=n)  # noqa: E731
        uncached = lambda: ours.generate(src, max_new_tokens=n, min_new_tokens=n, use_cache=False)  # noqa: E731
        assert torch.equal(cached(), uncached()), "cached and uncached decoding disagree"
        t = interleaved({"cached": cached, "uncached": uncached}, args.repeats)
        print(f"   {n:4d} new tokens: cached {t['cached'] * 1000:8.1f} ms, uncached {t['uncached'] * 1000:8.1f} ms"
              f"  -> {t['uncached'] / t['cached']:.2f}x faster (same tokens)")

    try:
        marian = marian_model()
    except ImportError:
        print("\n(transformers is not installed: pip install -r requirements-bench.txt for the Marian comparison)")
        return
    import transformers

    print(f"\n2. Against transformers {transformers.__version__} MarianMTModel.generate (same sizes, random weights)")
    n = 64
    src, mask = sources(1, 24, seed=2)
    ours_greedy = lambda: ours.generate(src, max_new_tokens=n, min_new_tokens=n)  # noqa: E731
    marian_greedy = lambda: marian.generate(input_ids=src, attention_mask=mask, max_new_tokens=n,  # noqa: E731
                                            min_new_tokens=n, num_beams=1, do_sample=False)
    with torch.inference_mode():
        t = interleaved({"ours": ours_greedy, "marian": marian_greedy}, args.repeats)
    print(f"   greedy, batch 1, {n} tokens: ours {t['ours'] / n * 1000:.2f} ms/token, "
          f"Marian {t['marian'] / n * 1000:.2f} ms/token -> {t['marian'] / t['ours']:.2f}x faster per token")

    n, batch = 32, 64
    src, mask = sources(batch, 24, seed=3)
    ours_beam = lambda: ours.generate(src, max_new_tokens=n, min_new_tokens=n, num_beams=4)  # noqa: E731
    marian_beam = lambda: marian.generate(input_ids=src, attention_mask=mask, max_new_tokens=n,  # noqa: E731
                                          min_new_tokens=n, num_beams=4, do_sample=False, early_stopping=False)
    with torch.inference_mode():
        t = interleaved({"ours": ours_beam, "marian": marian_beam}, max(3, args.repeats // 2))
    print(f"   beam 4, batch {batch}, {n} tokens: ours {batch / t['ours']:.1f} sentences/s, "
          f"Marian {batch / t['marian']:.1f} sentences/s -> {t['marian'] / t['ours']:.2f}x the throughput")


if __name__ == "__main__":
    main()
