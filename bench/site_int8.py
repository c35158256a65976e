"""The static site's int8 weights (ui/row_int8.py) against fp32 and fp16: Multi30k val BLEU (sacreBLEU) of the
same checkpoint with each, greedy and beam 4, the checkpoint's repetition rule, and the bytes of each weights
file. The int8 model is the one the page computes with: its matrices dequantised as q x scale a row. With
--probabilities N: how far int8 moves the probability of each written piece on the first N val sentences (greedy,
where both write the same pieces), the figure the static site states under its numbers.

    python bench/site_int8.py [--checkpoint checkpoints/de-en] [--sentences 1014] [--beams 1 4]
    python bench/site_int8.py --probabilities 100 --beams
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from safetensors.torch import save  # noqa: E402

from data import find_corpus, load_split  # noqa: E402
from training.evaluation import bleu_chrf, translate_all  # noqa: E402
from translation import Translator  # noqa: E402
from ui.export_site import weights_of  # noqa: E402
from ui.row_int8 import dequantised  # noqa: E402


def with_weights(checkpoint: str, precision: str) -> tuple[Translator, int]:
    """The checkpoint's translator computing with the weights the site would ship in `precision`; their bytes."""
    translator = Translator.from_pretrained(checkpoint, device="cpu")
    stored = weights_of(translator, precision)
    size = len(save(stored))
    floats = dequantised(stored) if precision == "int8" else {k: v.float() for k, v in stored.items()}
    missing, unexpected = translator.model.load_state_dict(floats, strict=False)
    assert not unexpected and all(k.startswith("lm_head.") for k in missing), (missing, unexpected)
    return translator, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoints/de-en")
    parser.add_argument("--sentences", type=int, default=None)
    parser.add_argument("--beams", type=int, nargs="*", default=[1, 4])
    parser.add_argument("--probabilities", type=int, default=0, help="val sentences to compare probabilities on")
    args = parser.parse_args()
    torch.set_num_threads(2)
    val = load_split(find_corpus(None), "val")
    german, english = val.src[: args.sentences], val.tgt[: args.sentences]
    print(f"{args.checkpoint}, Multi30k val, {len(german)} sentences")
    for precision in ("fp32", "fp16", "int8"):
        translator, size = with_weights(args.checkpoint, precision)
        scores = []
        for beams in args.beams:
            hyps = translate_all(translator, german, precision, num_beams=beams, progress=False)
            scores.append(f"beam {beams}: BLEU {bleu_chrf(hyps, english)['bleu']:.2f}")
        print(f"{precision}: weights {size / 2**20:.2f} MB; " + "; ".join(scores), flush=True)
    if args.probabilities:
        probability_shift(args.checkpoint, german[: args.probabilities])


def probability_shift(checkpoint: str, german: list[str]) -> None:
    """How far int8 moves each written piece's probability (percentage points): mean, 99th percentile, largest."""
    from lens.maps import explain

    exact, int8 = with_weights(checkpoint, "fp32")[0], with_weights(checkpoint, "int8")[0]
    shifts, differ = [], 0
    for text in german:
        a, b = explain(exact, text, num_beams=1), explain(int8, text, num_beams=1)
        if a.target_tokens != b.target_tokens:
            differ += 1
            continue
        shifts += [abs(p - q) * 100 for p, q in zip(a.target_probs, b.target_probs)]
    shifts.sort()
    print(
        f"int8 against fp32, {len(german)} sentences ({differ} written otherwise), {len(shifts)} pieces: a probability "
        f"moves {sum(shifts) / len(shifts):.2f} points on average, {shifts[int(0.99 * (len(shifts) - 1))]:.2f} at the "
        f"99th percentile, {shifts[-1]:.2f} at most"
    )


if __name__ == "__main__":
    main()
