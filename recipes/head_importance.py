"""Score every attention head of a checkpoint and write <checkpoint>/head_importance.json.

    python recipes/head_importance.py --checkpoint checkpoints/de-en [--data-dir DIR] [--sentences 200] [--seed S]
    python recipes/head_importance.py --checkpoint checkpoints/zh-en --zh-dir runs/corpora/tatoeba-zh
                          [--attribution integrated_gradients|input_x_gradient] [--steps 32] [--threads 1]
                          [--reuse-agreement JSON]

Each head is switched off alone, and left alone in its layer, and scored by val loss and greedy
BLEU on a fixed val slice (the first --sentences of val; with --seed a seeded random sample); the
cross-attention heads also by how often they point at the most-attributed source token. See
lens/importance.py for the method and the JSON schema.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import data  # noqa: E402
from lens.importance import (  # noqa: E402
    choose_slice,
    head_importance,
    importance_table_markdown,
    reusable_agreement,
)
from model.checkpoint.card import render_model_card  # noqa: E402
from training.settings import parse_settings  # noqa: E402
from translation import Translator  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="checkpoints/de-en", help="checkpoint folder (or Hub repo id)")
    parser.add_argument(
        "--data-dir", default=None, help="Multi30k folder (default: $MULTI30K_DIR, else ../shared/data/multi30k)"
    )
    parser.add_argument("--sentences", type=int, default=200, help="val sentences to score on")
    parser.add_argument(
        "--zh-dir", default=None, help="score on the Tatoeba Chinese dev split in this folder (the Chinese model)"
    )
    parser.add_argument("--seed", type=int, default=None, help="sample the slice at random with this seed")
    parser.add_argument(
        "--attribution",
        choices=("input_x_gradient", "integrated_gradients"),
        default="integrated_gradients",
        help="attribution for the agreement figures "
        "(input x gradient is faster but, where the model is sure, its gradients are near zero and noisy)",
    )
    parser.add_argument("--steps", type=int, default=32, help="integrated-gradients steps")
    parser.add_argument(
        "--reuse-agreement",
        default=None,
        metavar="JSON",
        help="take the attribution agreement from an earlier head_importance.json of the same "
        "checkpoint, slice and attribution (it does not depend on the masks)",
    )
    parser.add_argument("--threads", type=int, default=1, help="CPU threads for torch")
    parser.add_argument("--output", default=None, help="JSON path (default: <checkpoint>/head_importance.json)")
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed or 0)  # nothing here samples, but a seed keeps it that way
    translator = Translator.from_pretrained(args.checkpoint)
    dev = (
        data.load_split(data.find_chinese(args.zh_dir), "dev", "zh")  # the Chinese model: Tatoeba's dev split
        if args.zh_dir is not None
        else data.load_split(data.find_corpus(args.data_dir), "val")
    )
    val = choose_slice(dev, args.sentences, args.seed)
    output = Path(args.output) if args.output else Path(args.checkpoint) / "head_importance.json"
    if not output.parent.is_dir():
        raise SystemExit(f"--output: folder {output.parent} does not exist; give --output a path in an existing folder")
    agreement = None
    if args.reuse_agreement:
        earlier = json.loads(Path(args.reuse_agreement).read_text(encoding="utf-8"))
        agreement = reusable_agreement(earlier, val, args.attribution, args.steps)
    result = head_importance(
        translator,
        val,
        checkpoint=args.checkpoint,
        attribution=args.attribution,
        steps=args.steps,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
        known_agreement=agreement,
    )
    output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(importance_table_markdown(result))
    print(f"wrote {output} in {result['seconds']} s", file=sys.stderr)
    if args.output is None and (Path(args.checkpoint) / "results.json").is_file():
        update_card(translator, Path(args.checkpoint), result)
    return result


def update_card(translator: Translator, folder: Path, importance: dict) -> None:
    """Re-render <folder>/README.md from its results.json, with the head-importance table added.

    A results.json written before settings were recorded gets them back from its recorded command."""
    info = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    command = info.get("training", {}).get("command", "")
    if "settings" not in info and command.startswith("train.py "):
        argv = [a for a in command.split()[1:]]
        info["settings"] = parse_settings(argv).recorded()
    info["head_importance_table"] = importance_table_markdown(importance)
    card = render_model_card(translator.config, translator.model, info)
    (folder / "README.md").write_text(card, encoding="utf-8")
    print(f"updated the model card {folder / 'README.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
