"""A teacher's translations of the training sources of a corpus, for sequence-level distillation.

    python recipes/distill.py checkpoints/de-en --out runs/distill/multi30k-train.de-en.txt
    python train.py ... --distilled-targets runs/distill/multi30k-train.de-en.txt
    python recipes/distill.py TEACHER --corpus ding --out runs/distill/ding-train.de-en.txt
    python train.py --corpus multi30k+ding ... --distilled-ding runs/distill/ding-train.de-en.txt

Sequence-level distillation (Kim & Rush 2016): the student learns the teacher's beam output instead of
the human reference, one line per training pair, in the order of the training split. The student reads
a single, consistent translation of each caption (the teacher's mode) rather than one of many a
human could write, so it can spend its capacity on what it translates rather than on the variety of
the references. Beam 5 with the teacher's length penalty (its results.json). Written in chunks, so
an interrupted run resumes where it stopped; the finished file replaces the partial one atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from training.evaluation import translate_all  # noqa: E402
from translation import Translator  # noqa: E402

CHUNK = 2048  # sentences between two writes of the partial file


def teacher_length_penalty(folder: Path) -> float:
    """The length penalty the teacher was evaluated with (1.0 when its results do not say)."""
    try:
        results = json.loads((folder / "results.json").read_text())["results"]
        return float(results["decoding"]["length_penalty"])
    except (OSError, KeyError, ValueError, TypeError):
        return 1.0


def distill(teacher: Translator, sources: list[str], out: Path, num_beams: int, length_penalty: float) -> None:
    """Translate `sources` into `out`, resuming from `out.partial` when it exists."""
    partial = out.with_name(out.name + ".partial")
    done = partial.read_text(encoding="utf-8").splitlines() if partial.exists() else []
    for start in range(len(done), len(sources), CHUNK):
        chunk = sources[start : start + CHUNK]
        hyps = translate_all(teacher, chunk, f"{start + len(chunk)}/{len(sources)}", num_beams, length_penalty)
        done += [" ".join(h.split()) or "." for h in hyps]  # one line each, never empty
        partial.write_text("\n".join(done) + "\n", encoding="utf-8")
    os.replace(partial, out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("teacher", type=Path, help="checkpoint folder of the teacher")
    parser.add_argument("--out", type=Path, required=True, help="the targets file, one line per training pair")
    parser.add_argument(
        "--corpus",
        choices=("multi30k", "ding"),
        default="multi30k",
        help="whose training sources: the captions, or the Ding sentences (with their recovered readings)",
    )
    parser.add_argument("--data-dir", help="Multi30k folder (else $MULTI30K_DIR)")
    parser.add_argument("--ding-dir", help="Ding folder (else $DING_DIR, else runs/corpora/ding)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--num-beams", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        folder = data.resolve_data_dir(args.data_dir) if args.corpus == "multi30k" else data.find_ding(args.ding_dir)
        sources = data.load_split(folder, "train").src
    except data.CorpusError as err:
        raise SystemExit(f"distill.py: {err}") from None
    teacher = Translator.from_pretrained(args.teacher, device=args.device)
    if teacher.device.type == "cpu":
        teacher.compile()  # the native search: the same fp32 translations, about 3x faster
    args.out.parent.mkdir(parents=True, exist_ok=True)
    distill(teacher, sources, args.out, args.num_beams, teacher_length_penalty(args.teacher))
    print(f"wrote {args.out}: {len(sources)} translations by {args.teacher}")


if __name__ == "__main__":
    main()
