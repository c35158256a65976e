"""What each speed lever of generation gives: every lever switched off alone against all of them on.

    python bench/decode_levers.py [--threads 1] [--repeats 5]   (also part 5 of bench/decode.py)

Same rows as bench/versus_ct2.py, ours only: greedy batch 1 on 30 val sentences (ms/sentence),
beam 4 on 128 val sentences in batches of 64 (sentences/s), interleaved, medians. A lever is
switched off by putting back what the code did before it:
- step weights kept: rebuilt at every generate() call instead (generation.step_weights._DERIVED cleared)
- numpy's BLAS: torch's addmm (MKL sgemm) on the parameters instead (model/step_linear.BlasLinear off)
- growing KV cache: the whole max_new_tokens reserved for every row up front
- fp32 beam rows capped at Translator.CPU_SEARCH_ROWS: all rows of a batch searched at once
- numpy's BLAS on one thread: on torch's thread count instead (matters with --threads 2)
- int8: Translator(quantize="int8"), decoder and encoder matrices in int8
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
import generation.step as step  # noqa: E402
import generation.step_linear as step_linear  # noqa: E402
import generation.step_weights as step_weights  # noqa: E402
from translation import Translator  # noqa: E402


@contextlib.contextmanager
def rebuilt_step_weights():
    original = step.step_weights

    def every_call(model, precision="fp32"):
        step_weights._DERIVED.pop(model, None)
        return original(model, precision)

    step.step_weights = every_call
    try:
        yield
    finally:
        step.step_weights = original


@contextlib.contextmanager
def torch_matrix_products():
    original = step_linear.BlasLinear.available
    step_linear.BlasLinear.available = staticmethod(lambda weight: False)
    step_weights._DERIVED.clear()
    try:
        yield
    finally:
        step_linear.BlasLinear.available = original
        step_weights._DERIVED.clear()


@contextlib.contextmanager
def full_kv_cache():
    original = step.KVCache.GROW_STEPS
    step.KVCache.GROW_STEPS = 1 << 30
    try:
        yield
    finally:
        step.KVCache.GROW_STEPS = original


@contextlib.contextmanager
def uncapped_beam_rows():
    original = Translator.CPU_SEARCH_ROWS
    Translator.CPU_SEARCH_ROWS = 1 << 30
    try:
        yield
    finally:
        Translator.CPU_SEARCH_ROWS = original


@contextlib.contextmanager
def blas_on_torchs_threads():
    original = step.single_threaded_blas

    def torchs_count():
        for pool in step_linear._blas_pools():
            pool.set_num_threads(torch.get_num_threads())

    step.single_threaded_blas = torchs_count
    try:
        yield
    finally:
        step.single_threaded_blas = original
        original()


def variants(fp32: Translator, int8: Translator) -> dict:
    """name -> (translator, context that switches one lever off)."""
    return {
        "all levers": (fp32, contextlib.nullcontext),
        "step weights rebuilt per call": (fp32, rebuilt_step_weights),
        "matrices on torch's addmm (MKL)": (fp32, torch_matrix_products),
        "KV cache reserved in full": (fp32, full_kv_cache),
        "beam rows not capped": (fp32, uncapped_beam_rows),
        "BLAS on torch's threads": (fp32, blas_on_torchs_threads),
        "int8 (quantize='int8')": (int8, contextlib.nullcontext),
    }


def run(checkpoint: str, data_dir: str | None, threads: int, repeats: int) -> None:
    torch.set_num_threads(threads)
    val = data.load_split(data.find_corpus(data_dir), "val").src
    fp32 = Translator.from_pretrained(checkpoint, device="cpu")
    int8 = Translator.from_pretrained(checkpoint, device="cpu", quantize="int8")
    rows = {
        "greedy": lambda t: [t.translate(s, num_beams=1) for s in val[:30]],
        "beam": lambda t: t.translate(val[:128], num_beams=4, batch_size=64),
    }
    cases = variants(fp32, int8)
    times = {(name, row): [] for name in cases for row in rows}
    for _ in range(repeats + 1):  # the first round warms up and is dropped
        for name, (translator, switch) in cases.items():
            for row, fn in rows.items():
                with switch():
                    start = time.perf_counter()
                    fn(translator)
                    times[name, row].append(time.perf_counter() - start)
    median = {key: statistics.median(values[1:]) for key, values in times.items()}
    base_greedy, base_beam = median["all levers", "greedy"], median["all levers", "beam"]
    print(
        f"Levers, {threads} thread(s), interleaved medians of {repeats}: greedy batch 1 ms/sentence, "
        f"beam 4 x 64 sentences/s, and each against all levers on"
    )
    for name in cases:
        greedy, beam = median[name, "greedy"], median[name, "beam"]
        print(
            f"   {name:32s} greedy {greedy / 30 * 1000:6.1f} ms ({greedy / base_greedy:.2f}x)   "
            f"beam {128 / beam:6.1f} sentences/s ({beam / base_beam:.2f}x the time)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    run(args.checkpoint, args.data_dir, args.threads, args.repeats)


if __name__ == "__main__":
    main()
