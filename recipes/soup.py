"""The weights of several checkpoints that started from the same one, averaged ("a model soup").

    python recipes/soup.py checkpoints/de-en-everyday runs/everyday/cont-r6-recovered/checkpoint [...]
    python recipes/soup.py A B [...] --out runs/everyday/soup [--test]
    python recipes/soup.py A B --weights 0.4,0.6     # 0.4 of A's weights and 0.6 of B's
    python recipes/soup.py A B --by-part 0.5,1,0.5   # B's share in the embedding, encoder, decoder

Fine-tuned copies of one model stay in one basin of the loss, so the mean of their weights is often
better than each; `--weights` moves the point along the line between them (WiSE-FT's mixing coefficient,
chosen on the dev sets); `--by-part` gives each part of the model (embedding, encoder, decoder) its own
share. The checkpoints must share shape and tokenizer (refused otherwise). Scored with
beam 5 and the length penalty on both dev sets (Multi30k val, the everyday dev split), with the mean
of the two BLEU scores that the training runs choose by. `--out` writes a checkpoint folder from the
last checkpoint given (its results.json, metrics and curves) with the averaged weights, its results
and a card that names every ingredient; `--test` also scores both test sets, once, for the soup you
ship. Last, the soup's translations of the two everyday sentences it must get right. Then write its
evidence index (`python -m training.evidence`) and its alarm (`recipes/alarm.py`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from training.evaluation import final_evaluation, score_everyday  # noqa: E402
from training.finish import started_from  # noqa: E402
from translation import Translator  # noqa: E402

NAMED = ("Ich möchte ein Bier.", "Wo ist der Bahnhof?")  # the everyday sentences the model must translate right


def shares(text: str | None, count: int) -> list[float]:
    """Each checkpoint's share of the soup: equal when not given; else `count` non-negative numbers summing to 1."""
    if text is None:
        return [1 / count] * count
    try:
        values = [float(value) for value in text.split(",")]
    except ValueError:
        raise SystemExit(f"error: --weights {text!r}: give numbers separated by commas, e.g. 0.4,0.6") from None
    if len(values) != count or min(values) < 0 or abs(sum(values) - 1) > 1e-6:
        raise SystemExit(f"error: --weights {text!r}: give {count} shares, none negative, that sum to 1")
    return values


def loaded(folders: list[Path]) -> list[Translator]:
    """The checkpoints, loaded; refused when shapes or tokenizers differ."""
    translators = [Translator.from_pretrained(folder, device="cpu") for folder in folders]
    last = translators[-1]
    for folder, other in zip(folders, translators):
        if other.model.config != last.model.config or other.tokenizer.to_str() != last.tokenizer.to_str():
            raise SystemExit(f"error: {folder} has another shape or tokenizer than {folders[-1]}")
    return translators


def mixed(folders: list[Path], shares_of: Callable[[str], list[float]]) -> Translator:
    """The last checkpoint holding, for each weight `name`, the mean of all their copies with `shares_of(name)`;
    refused when shapes or tokenizers differ."""
    translators = loaded(folders)
    last = translators[-1]
    states = [t.model.state_dict() for t in translators]  # the mix is computed whole before it is loaded
    last.model.load_state_dict(
        {
            name: torch.einsum(
                "k,k...->...",
                torch.tensor(shares_of(name), dtype=torch.float64),
                torch.stack([s[name].double() for s in states]),
            ).to(tensor.dtype)
            for name, tensor in states[-1].items()
        }
    )
    return last


def averaged(folders: list[Path], weights: list[float] | None = None) -> Translator:
    """The last checkpoint holding the (weighted) mean of all their weights."""
    weights = weights or shares(None, len(folders))
    return mixed(folders, lambda name: weights)


PARTS = ("the embedding (and output layer)", "the encoder layers", "the decoder layers")


def part_of(name: str) -> int:
    """Which of PARTS a weight belongs to."""
    return 1 if name.startswith("encoder_layers.") else 2 if name.startswith("decoder_layers.") else 0


def part_shares(text: str) -> list[float]:
    """--by-part: the second checkpoint's share in each of PARTS, three numbers from 0 to 1."""
    try:
        values = [float(value) for value in text.split(",")]
    except ValueError:
        values = []
    if len(values) != len(PARTS) or not all(0 <= v <= 1 for v in values):
        raise SystemExit(
            f"error: --by-part {text!r}: give the second checkpoint's share in the embedding, the encoder "
            "and the decoder, three numbers from 0 to 1, e.g. 0.5,1,0.5"
        )
    return values


def averaged_by_part(folders: list[Path], last_shares: list[float]) -> Translator:
    """Two checkpoints mixed part by part: in each of PARTS the second's share of its weights, the first's the rest."""
    if len(folders) != 2:
        raise SystemExit(f"error: --by-part mixes two checkpoints, not {len(folders)}")
    return mixed(folders, lambda name: [1 - last_shares[part_of(name)], last_shares[part_of(name)]])


def scores(soup: Translator, args) -> tuple[dict, dict[str, str]]:
    """results.json's "results" for the soup (tests with --test), and the test hypotheses files."""
    multi30k, ding = data.find_corpus(args.data_dir), data.find_ding(args.ding_dir)
    test = data.load_split(multi30k, "test_2016_flickr") if args.test else None
    results, hyps = final_evaluation(soup, data.load_split(multi30k, "val"), test, 5, [args.length_penalty])
    everyday, everyday_hyps = score_everyday(
        soup, data.load_split(ding, "dev"), data.load_split(ding, "test") if args.test else None, 5, args.length_penalty
    )
    results.update(everyday)
    files = {"test_hypotheses.txt": hyps, "everyday_test_hypotheses.txt": everyday_hyps} if args.test else {}
    return results, {name: "\n".join(lines) + "\n" for name, lines in files.items()}


def write(
    soup: Translator,
    folders: list[Path],
    results: dict,
    files: dict[str, str],
    out: Path,
    weights: list[float] | None = None,
) -> None:
    """The last ingredient's folder, with the soup's weights, results and card, written to `out`."""
    info = json.loads((folders[-1] / "results.json").read_text())
    info["results"] = results
    info["training"]["soup"] = [started_from(str(folder)) for folder in folders[:-1]]
    if weights is not None:  # a weighted soup says each share; the last one is this run's own
        for other, share in zip(info["training"]["soup"], weights):
            other["share"] = share
    staging = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(
        folders[-1], staging, ignore=shutil.ignore_patterns("*hypotheses.txt", "alarm.json", "evidence.json.gz")
    )
    soup.save_pretrained(staging, card_info=info)
    (staging / "results.json").write_text(json.dumps(info, indent=2) + "\n")
    for name, text in files.items():
        (staging / name).write_text(text, encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, help="write the soup as a checkpoint folder")
    parser.add_argument("--test", action="store_true", help="score both test sets too: once, for the soup you ship")
    parser.add_argument("--weights", help="each checkpoint's share, in order, summing to 1 (default: equal shares)")
    parser.add_argument(
        "--by-part",
        help="two checkpoints mixed part by part: the second's share in the embedding, the "
        "encoder layers and the decoder layers (e.g. 0.5,1,0.5); scored, not written",
    )
    parser.add_argument("--length-penalty", type=float, default=1.4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir")
    parser.add_argument("--ding-dir")
    args = parser.parse_args()
    if args.test and not args.out:
        parser.error("--test scores the soup you ship: give --out")
    if args.by_part and (args.out or args.weights):
        parser.error("--by-part is scored on the dev sets only: without --out and --weights")
    torch.set_num_threads(args.threads)
    weights = shares(args.weights, len(args.checkpoints))
    if args.by_part:
        soup = averaged_by_part(args.checkpoints, part_shares(args.by_part))
    else:
        soup = averaged(args.checkpoints, weights)
    results, files = scores(soup, args)
    for name in ("val", "everyday_dev", "test", "everyday_test"):
        if name in results:
            print(f"{name}: BLEU {results[name]['bleu']:.2f} / chrF {results[name]['chrf']:.2f}")
    print(f"mean of the two dev BLEU scores: {(results['val']['bleu'] + results['everyday_dev']['bleu']) / 2:.2f}")
    for german in NAMED:  # a soup that gets one of them wrong is not shipped, whatever its scores
        print(f"{german} -> {soup.translate(german, num_beams=5, length_penalty=args.length_penalty)}")
    if args.out:
        write(soup, args.checkpoints, results, files, args.out, weights if args.weights else None)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
