"""Distillation from a wide teacher, in one GPU sitting: the teacher, its translations, the student.

    python recipes/everyday/wide_teacher.py --out $OUT/wide --data-dir .gpu/multi30k --ding-dir runs/corpora/ding
    python recipes/everyday/wide_teacher.py --unpack $OUT/wide --output runs/everyday/wide-student
    python recipes/everyday/wide_teacher.py --tiny --out runs/wide-check ...   # the script checked on a CPU in minutes

1. The teacher: d_model 512, 8 heads, d_ff 2048 (the levers sweep's `mix-r2-wide-512`: 3.6x the decoding
   cost of the shipped shape) trained from scratch on the captions and the Ding sentences for
   --teacher-minutes, its weights chosen on the two dev sets as every run's are.
2. Its beam-5 translations of both training sets (recipes/distill.py): the captions' and the
   Ding sentences' English as the teacher would write them. With --more-corpora (e.g. backtranslated:2,games:2)
   teacher and student also learn from those corpora, their human English kept.
3. The student: the shipped everyday model (its shape and vocabulary) trained on for --student-minutes on
   those translations (`--distilled-targets`, `--distilled-ding`), the recipe of the `distilled` step of
   recipes/everyday/de-en-everyday.sh.
4. Packed into --out as files of at most 15 MiB (what comes back from a GPU machine): the student's fp32
   weights in parts, and a bundle of its folder, the teacher's results and both translation files.
   `--unpack` joins them into a checkpoint folder (the weights checked against their sha256), to be
   scored on dev here and, if it is chosen, on test once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PART = 15 * 2**20
TEACHER = [
    "--corpus",
    "multi30k+ding",
    "--ding-repeat",
    "2",
    "--d-model",
    "512",
    "--n-heads",
    "8",
    "--d-ff",
    "2048",
    "--batch-tokens",
    "12288",
    "--lr",
    "2e-3",
    "--warmup",
    "800",
    "--dropout",
    "0.3",
    "--epochs",
    "400",
]
STUDENT = [
    "--init-from",
    "checkpoints/de-en-everyday",
    "--corpus",
    "multi30k+ding",
    "--ding-repeat",
    "6",
    "--lr",
    "3e-4",
    "--warmup",
    "200",
    "--dropout",
    "0.15",
    "--batch-tokens",
    "6144",
    "--epochs",
    "400",
]
COMMON = ["--skip-test", "--snapshot-steps", "none", "--num-beams", "5", "--length-penalties", "1.0,1.4"]
TINY = [
    "--max-train-pairs",
    "200",
    "--max-eval-sentences",
    "8",
    "--max-steps",
    "4",
    "--eval-every",
    "2",
    "--batch-tokens",
    "1024",
    "--num-beams",
    "1",
    "--length-penalties",
    "1.0",
    "--vocab-size",
    "600",
]
TINY_SHAPE = ["--d-model", "32", "--n-heads", "2", "--n-layers", "1", "--d-ff", "64"]


def run(cmd: list[str], log: Path) -> None:
    """One step as a subprocess, its output in `log`; a failure ends the script naming the log."""
    print(" ".join(cmd), flush=True)
    with open(log, "w") as out:
        code = subprocess.call(
            [sys.executable, *cmd],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    if code:
        raise SystemExit(f"wide_teacher.py: {cmd[0]} failed ({code}); see {log}")


def corpus_flags(args) -> list[str]:
    """Where train.py and distill.py find the two corpora (unless given, where they look themselves)."""
    return [
        *(["--data-dir", str(args.data_dir)] if args.data_dir else []),
        *(["--ding-dir", str(args.ding_dir)] if args.ding_dir else []),
    ]


def train(name: str, flags: list[str], minutes: float, args) -> Path:
    """A train.py run in the work folder; returns its checkpoint folder."""
    folder = args.work / name
    folder.mkdir(parents=True, exist_ok=True)
    if args.tiny and "--init-from" in flags:  # a tiny shape, from scratch: the shipped weights have another
        at = flags.index("--init-from")
        flags = flags[:at] + flags[at + 2 :]
    if args.tiny:
        flags = [*flags, *TINY, *TINY_SHAPE]
    run(
        [
            "train.py",
            *corpus_flags(args),
            "--output",
            str(folder / "checkpoint"),
            "--work-dir",
            str(folder / "work"),
            "--time-limit",
            str(minutes),
            *COMMON,
            *flags,
        ],
        folder / "train.log",
    )
    return folder / "checkpoint"


def distill(teacher: Path, args) -> dict[str, Path]:
    """The teacher's translations of both training sets."""
    files = {}
    for corpus in ("multi30k", "ding"):
        files[corpus] = args.work / "distill" / f"{corpus}-train.de-en.txt"
        beams = ["--num-beams", "1"] if args.tiny else []
        run(
            [
                "recipes/distill.py",
                str(teacher),
                "--corpus",
                corpus,
                "--out",
                str(files[corpus]),
                *corpus_flags(args),
                *beams,
            ],
            args.work / f"distill-{corpus}.log",
        )
    return files


def pack(student: Path, teacher: Path, files: dict[str, Path], out: Path) -> None:
    """The student's weights in parts, the rest in bundle.tar.gz."""
    out.mkdir(parents=True, exist_ok=True)
    weights = (student / "model.safetensors").read_bytes()
    for i in range(0, len(weights), PART):
        (out / f"model.part{i // PART}").write_bytes(weights[i : i + PART])
    with tarfile.open(out / "bundle.tar.gz", "w:gz") as tar:
        for path in sorted(student.iterdir()):
            if path.is_file() and path.name != "model.safetensors":
                tar.add(path, f"student/{path.name}")
        tar.add(teacher / "results.json", "teacher/results.json")
        for path in files.values():
            tar.add(path, f"distill/{path.name}")
        manifest = out / "manifest.json"
        manifest.write_text(
            json.dumps({"weights_sha256": hashlib.sha256(weights).hexdigest(), "parts": -(-len(weights) // PART)})
            + "\n"
        )
        tar.add(manifest, "manifest.json")


def unpack(packed: Path, output: Path) -> None:
    """A checkpoint folder from what `pack` wrote; the teacher's results and the translations go beside it
    (OUTPUT-teacher/, OUTPUT-distill/)."""
    manifest = json.loads((packed / "manifest.json").read_text())
    weights = b"".join((packed / f"model.part{i}").read_bytes() for i in range(manifest["parts"]))
    if hashlib.sha256(weights).hexdigest() != manifest["weights_sha256"]:
        raise SystemExit(f"wide_teacher.py: the weights in {packed} are not the ones packed (sha256 differs)")
    folders = {
        "student": output,
        "teacher": output.with_name(f"{output.name}-teacher"),
        "distill": output.with_name(f"{output.name}-distill"),
    }
    with tarfile.open(packed / "bundle.tar.gz") as tar:
        for member in tar.getmembers():
            part, name = Path(member.name).parts[0], Path(member.name).name
            if member.isfile() and part in folders:  # a known folder and a plain name: nothing lands elsewhere
                folders[part].mkdir(parents=True, exist_ok=True)
                (folders[part] / name).write_bytes(tar.extractfile(member).read())
    output.mkdir(parents=True, exist_ok=True)
    (output / "model.safetensors").write_bytes(weights)
    print(f"wrote {output}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where the student is packed")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "wide-teacher", help="the runs' folders")
    parser.add_argument("--data-dir", type=Path, help="Multi30k folder (else $MULTI30K_DIR)")
    parser.add_argument("--ding-dir", type=Path, help="Ding folder (else $DING_DIR, else runs/corpora/ding)")
    parser.add_argument("--teacher-minutes", type=float, default=3.5)
    parser.add_argument("--student-minutes", type=float, default=3.0)
    parser.add_argument(
        "--more-corpora",
        help="teacher and student also learn from these (train.py --more-corpora, "
        "e.g. backtranslated:2,games:2 as the everyday model did); carry runs/corpora with the tree",
    )
    parser.add_argument("--tiny", action="store_true", help="tiny models and few steps: a check of the script")
    parser.add_argument("--unpack", type=Path, help="join a packed student into --output instead")
    parser.add_argument("--output", type=Path, help="with --unpack: the checkpoint folder to write")
    args = parser.parse_args(argv)
    if args.unpack:
        if not args.output:
            parser.error("--unpack needs --output")
        unpack(args.unpack, args.output)
        return 0
    if not args.out:
        parser.error("give --out (or --unpack)")
    more = ["--more-corpora", args.more_corpora] if args.more_corpora else []
    teacher = train("teacher", [*TEACHER, *more], args.teacher_minutes, args)
    files = distill(teacher, args)
    student = train(
        "student",
        [*STUDENT, *more, "--distilled-targets", str(files["multi30k"]), "--distilled-ding", str(files["ding"])],
        args.student_minutes,
        args,
    )
    pack(student, teacher, files, args.out)
    print(f"packed the student into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
