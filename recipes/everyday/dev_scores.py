"""Greedy dev scores of a training run's best weights (its work dir), beside the shipped checkpoints.

    python recipes/everyday/dev_scores.py runs/everyday/scratch-r3/work [--ding-dir runs/corpora/ding]

Both dev sets (Multi30k val, the everyday dev split), greedy BLEU and chrF, for the run's
best.safetensors with the tokenizer in its work dir (d_model 256, 4 heads, 3+3 layers, d_ff 1024:
the run's shape), and for checkpoints/de-en and checkpoints/de-en-everyday; then the everyday
sentences the issue names. Dev sets only: no test set is read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import sacrebleu
import torch
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from model import Transformer, TransformerConfig  # noqa: E402
from tokenizer import load_tokenizer  # noqa: E402
from translation import Translator  # noqa: E402

EXAMPLES = [
    "Ich möchte ein Bier.",
    "Wo ist der Bahnhof?",
    "Kannst du mir helfen?",
    "Das Wetter ist heute schön.",
    "Ich habe keine Zeit.",
]


def from_work_dir(work: Path) -> Translator:
    tokenizer = load_tokenizer(work / "tokenizer.json")
    config = TransformerConfig(
        vocab_size=tokenizer.get_vocab_size(),
        d_model=256,
        n_heads=4,
        n_encoder_layers=3,
        n_decoder_layers=3,
        d_ff=1024,
        dropout=0.0,
        max_len=256,
    )
    model = Transformer(config)
    model.load_state_dict(load_file(str(work / "best.safetensors")), strict=False)  # lm_head is tied to embed
    return Translator(model.eval(), tokenizer, device="cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--ding-dir", default=None)
    args = parser.parse_args()
    torch.set_num_threads(2)
    val = data.load_split(data.find_corpus(args.data_dir), "val")
    dev = data.load_split(data.find_ding(args.ding_dir), "dev")
    models = {str(args.work): from_work_dir(args.work)}
    for name in ("de-en", "de-en-everyday"):
        models[f"checkpoints/{name}"] = Translator.from_pretrained(ROOT / "checkpoints" / name, device="cpu")
    for name, translator in models.items():
        v, e = translator.translate(val.src, num_beams=1), translator.translate(dev.src, num_beams=1)
        print(
            f"{name}: Multi30k val BLEU {sacrebleu.corpus_bleu(v, [val.tgt]).score:.2f} / chrF "
            f"{sacrebleu.corpus_chrf(v, [val.tgt]).score:.2f}; everyday dev BLEU {sacrebleu.corpus_bleu(e, [dev.tgt]).score:.2f}"
            f" / chrF {sacrebleu.corpus_chrf(e, [dev.tgt]).score:.2f} (greedy)",
            flush=True,
        )
        print("   " + "; ".join(f"{s} -> {translator.translate(s)}" for s in EXAMPLES), flush=True)


if __name__ == "__main__":
    main()
