"""The GPU, measured: the CUDA tests, then decoding speed on the CPU and the GPU side by side.

    python bench/gpu.py [--checkpoint checkpoints/de-en] [--data-dir DIR] [--sentences 128]

Where there is no CUDA GPU it says so and exits 0. Otherwise it
1. runs tests/test_cuda.py (fp32 and bf16 against the CPU, cached = uncached, explain's maps,
   bf16-autocast training) and reports how many passed;
2. translates Multi30k val sentences (found like the tests find them: --data-dir, else
   $MULTI30K_DIR, else ../shared/data/multi30k) with the checkpoint: greedy at batch 1 (ms per
   sentence) and beam 4 in batches of 64 (sentences per second), on the CPU and on the GPU in
   fp32 and with bf16 autocast, each the median of --repeats runs after a warm-up;
3. prints the figures as a markdown table, with how many GPU translations equal the CPU's.
--cpu-only measures the CPU row alone, to check the script on a machine without a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from translation import Translator  # noqa: E402


def corpus_dir(data_dir: str | None) -> Path:
    """The folder given, else $MULTI30K_DIR, else the shared corpus beside the checkout (as the tests find it)."""
    import os

    import data

    return Path(data_dir or os.environ.get(data.DATA_DIR_ENV) or data.SHARED_CORPUS)


def val_sentences(data_dir: Path, count: int) -> list[str]:
    import data

    try:
        return data.load_split(data_dir, "val").src[:count]
    except (OSError, data.CorpusError) as err:
        sys.exit(f"Multi30k val not found in {data_dir} ({err}): pass --data-dir or set MULTI30K_DIR")


def run_cuda_tests() -> str:
    """pytest's summary line for tests/test_cuda.py."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "tests/test_cuda.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines = [line for line in result.stdout.strip().splitlines() if line.strip()]
    summary = lines[-1] if lines else result.stderr.strip()[-300:]
    if result.returncode != 0:
        print(result.stdout[-4000:], file=sys.stderr)
    return summary


def median_seconds(fn, repeats: int, device: torch.device) -> float:
    """Median wall time of `fn` after one warm-up run (CUDA work waited for)."""

    def once() -> float:
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start

    once()
    return statistics.median(once() for _ in range(repeats))


def measure(translator: Translator, sentences: list[str], repeats: int, bf16: bool = False) -> dict:
    """Greedy ms/sentence at batch 1, beam-4 sentences/s at batch 64, and the beam-4 outputs."""
    device = translator.device
    precision = torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    outputs = []

    def greedy():
        for sentence in sentences:
            translator.translate(sentence, num_beams=1)

    def beam():
        outputs[:] = translator.translate(sentences, num_beams=4, batch_size=64)

    with precision:
        greedy_s = median_seconds(greedy, repeats, device)
        beam_s = median_seconds(beam, repeats, device)
    return {
        "greedy_ms": 1000 * greedy_s / len(sentences),
        "beam_per_s": len(sentences) / beam_s,
        "outputs": list(outputs),
    }


def table(rows: list[tuple[str, str, dict]], reference: list[str]) -> str:
    lines = [
        "| device | precision | greedy, batch 1 (ms/sentence) | beam 4, batch 64 (sentences/s) "
        "| beam-4 outputs equal to the CPU's |",
        "|---|---|---:|---:|---:|",
    ]
    for device, precision, r in rows:
        same = sum(a == b for a, b in zip(r["outputs"], reference))
        lines.append(
            f"| {device} | {precision} | {r['greedy_ms']:.1f} | {r['beam_per_s']:.1f} | {same}/{len(reference)} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None, help="Multi30k folder (default: as the tests find it)")
    parser.add_argument("--sentences", type=int, default=128, help="val sentences to translate")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu-only", action="store_true", help="measure the CPU alone (checks the script)")
    args = parser.parse_args()
    if not torch.cuda.is_available() and not args.cpu_only:
        print(
            f"No CUDA GPU on this machine (torch {torch.__version__}, CUDA build {torch.version.cuda or 'none'}): "
            "nothing to measure. Run this on a machine with a GPU."
        )
        return
    sentences = val_sentences(corpus_dir(args.data_dir), args.sentences)
    cpu_name = f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    cpu = measure(Translator.from_pretrained(args.checkpoint, device="cpu"), sentences, args.repeats)
    rows = [(cpu_name, "fp32", cpu)]
    if not args.cpu_only:
        tests = run_cuda_tests()
        gpu_name = torch.cuda.get_device_name(0)
        gpu = Translator.from_pretrained(args.checkpoint, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32, as in the tests
        rows.append((gpu_name, "fp32", measure(gpu, sentences, args.repeats)))
        rows.append((gpu_name, "bf16 autocast", measure(gpu, sentences, args.repeats, bf16=True)))
        print(f"tests/test_cuda.py: {tests}")
    print(f"{len(sentences)} Multi30k val sentences, checkpoint {args.checkpoint}, torch {torch.__version__}\n")
    print(table(rows, cpu["outputs"]))


if __name__ == "__main__":
    main()
