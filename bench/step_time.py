"""Where a greedy token's time goes: the decoder's matrix products against everything else.

    python bench/step_time.py [--checkpoint checkpoints/de-en] [--threads 1] [--repeats 3]

Greedy batch 1 on 30 Multi30k val sentences with the shipped checkpoint (fp32): the time per
token, the part spent in the step matrices (generation/step_linear.py, timed call by call), and the
same products run back to back on their own, cycling through the real weights, which is what
reading them from memory costs when nothing else runs. Prints the best of --repeats.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
import generation.step_linear as step_linear  # noqa: E402
from generation.step_weights import step_weights  # noqa: E402
from translation import Translator  # noqa: E402


def timed_products(translator: Translator, sentences: list[str]) -> tuple[float, float, int]:
    """Seconds in all, seconds inside the step matrices, tokens generated."""
    spent = [0.0]
    products = step_linear.BlasLinear.__call__

    def timed(self, x):
        start = time.perf_counter()
        out = products(self, x)
        spent[0] += time.perf_counter() - start
        return out

    step_linear.BlasLinear.__call__ = timed
    try:
        start = time.perf_counter()
        outputs = [translator.translate(s, num_beams=1) for s in sentences]
        total = time.perf_counter() - start
    finally:
        step_linear.BlasLinear.__call__ = products
    tokens = sum(len(translator.tokenizer.encode(o, add_special_tokens=False).ids) + 1 for o in outputs)  # + EOS
    return total, spent[0], tokens


def products_alone(translator: Translator, tokens: int) -> float:
    """Seconds for `tokens` rounds of a step's matrix products, one row, nothing else in between."""
    weights = step_weights(translator.model)
    matrices = [m for layer in weights.layers for pair in (layer.self_attn, layer.cross_attn, layer.ff) for m in pair]
    matrices.append(weights.lm_head)
    rows = {m: torch.randn(1, m.weight.shape[0]) for m in matrices}
    start = time.perf_counter()
    for _ in range(tokens):
        for m in matrices:
            m(rows[m])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    sentences = data.load_split(data.find_corpus(args.data_dir), "val").src[:30]
    timed_products(translator, sentences[:5])  # warm-up
    runs = [timed_products(translator, sentences) for _ in range(args.repeats)]
    total, inside, tokens = min(runs)
    alone = min(products_alone(translator, tokens) for _ in range(args.repeats))
    ms = 1000 / tokens
    print(
        f"greedy batch 1, 30 val sentences, {tokens / 30:.1f} tokens a sentence, {args.threads} thread(s), "
        f"best of {args.repeats}:"
    )
    print(
        f"   per token {total * ms:.2f} ms: matrix products {inside * ms:.2f} ms, everything else "
        f"{(total - inside) * ms:.2f} ms (encoder, attention, norms, search, Python)"
    )
    print(f"   the same products back to back on their own: {alone * ms:.2f} ms a token")


if __name__ == "__main__":
    main()
