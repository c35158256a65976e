"""The compiled decoder step (compiled/decoder.py) against the eager one and CTranslate2, side by side in one run.

    python bench/compiled.py [--repeats 3] [--sentences 30]
    python bench/compiled.py --int8      # the int8 rows alone
    python bench/compiled.py --speed-only  # the speed rows alone (no build times, no RSS)

Rows (interleaved medians, same weights, same source ids, Multi30k val):
- greedy, batch 1, and beam 4 one sentence at a time (the page's case): ms/sentence, eager / compiled /
  CTranslate2 fp32, and how many outputs the compiled step gives exactly as eager does;
- beam 4 x 128 in batches of 64: above 16 rows the compiled step is not used (the eager step's BLAS
  calls win there), so this row is the eager one;
- compile time with an empty cache (a fresh process; a child of it builds the package) and with the
  package that run left (another fresh process, which only loads it);
- peak RSS of a fresh process translating 30 sentences at beam 4: eager, compiled from the cache, and
  building the package first (that process, and its child that builds);
- the physical limit of one greedy token: the bytes of the decoder's weights over the memory
  bandwidth measured here (a copy of 1 GB), beside the compiled token.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import ct2_convert  # noqa: E402
from timing import interleaved  # noqa: E402

import data  # noqa: E402
from generation import generate  # noqa: E402
from translation import Translator  # noqa: E402

CHILD = """
import sys, time, torch
sys.path.insert(0, {root!r})
torch.set_num_threads(1)
from translation import Translator
t = Translator.from_pretrained({checkpoint!r}, device="cpu")
step = t.compile(cache_dir={cache!r}, native=False)
start = time.perf_counter()
t.translate("Ein Mann fährt Fahrrad.")
print(step.seconds, time.perf_counter() - start, step.failure)
"""


RSS_CHILD = """
import resource, sys, torch
sys.path.insert(0, {root!r})
torch.set_num_threads(1)
import data
from translation import Translator
t = Translator.from_pretrained({checkpoint!r}, device="cpu")
if {compiled!r}:
    t.compile(cache_dir={cache!r}, native=False)
for s in data.load_split(data.find_corpus({data_dir!r}), "val").src[:30]:
    t.translate(s, num_beams=4)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def peak_rss_mb(checkpoint: str, cache: Path, data_dir: str | None, compiled: bool) -> tuple[float, float]:
    """Peak RSS of a fresh process translating 30 val sentences one by one at beam 4, eager or compiled;
    and the largest of its child processes (the one that builds the package where `cache` has none)."""
    code = RSS_CHILD.format(
        root=str(ROOT), checkpoint=checkpoint, cache=str(cache), data_dir=data_dir, compiled=compiled
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800, check=True).stdout
    return float(out.split()[-2]), float(out.split()[-1])


def compile_seconds(checkpoint: str, cache: Path) -> tuple[float, float]:
    """Compile and warm-up time in a fresh process with `cache`, and its first translation after."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=str(ROOT), checkpoint=checkpoint, cache=str(cache))],
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    ).stdout.split()
    return float(out[-3]), float(out[-2])


def bandwidth_gb_s() -> float:
    """One thread copying 1 GB: GB/s read (the copy also writes as much)."""
    a, b = np.ones(2**28, dtype=np.float32), np.empty(2**28, dtype=np.float32)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        np.copyto(b, a)
        times.append(time.perf_counter() - start)
    return a.nbytes / min(times) / 1e9


def decoder_bytes(translator: Translator) -> int:
    """Bytes of the weights a decoder step reads: every decoder matrix and the output layer."""
    model = translator.model
    return (
        sum(p.numel() * p.element_size() for p in model.decoder_layers.parameters())
        + model.lm_head.weight.numel() * model.lm_head.weight.element_size()
    )


def rows(eager: Translator, compiled: Translator, ct2, val: list[str], repeats: int) -> None:
    def one_by_one(translate, beams):
        return lambda: [translate(s, beams) for s in val]

    def ct2_translate(sentence, beams):
        tokens = ct2_convert.source_tokens(eager, sentence)
        result = ct2.translate_batch([tokens], beam_size=beams, max_decoding_length=2 * len(tokens) + 10)
        return eager.decode([eager.tokenizer.token_to_id(t) for t in result[0].hypotheses[0]])

    def ours(translator):
        return lambda s, beams: translator.translate(s, num_beams=beams)

    for beams, name in ((1, "greedy, batch 1"), (4, "beam 4, one sentence at a time")):
        t = interleaved(
            {
                "eager": one_by_one(ours(eager), beams),
                "compiled": one_by_one(ours(compiled), beams),
                "ct2": one_by_one(ct2_translate, beams),
            },
            repeats,
        )
        ms = {k: v / len(val) * 1000 for k, v in t.items()}
        same = sum(compiled.translate(s, num_beams=beams) == eager.translate(s, num_beams=beams) for s in val)
        print(
            f"   {name}: eager {ms['eager']:.1f}, compiled {ms['compiled']:.1f}, CTranslate2 {ms['ct2']:.1f} "
            f"ms/sentence; compiled / CTranslate2 {ms['compiled'] / ms['ct2']:.2f}x, eager / compiled "
            f"{ms['eager'] / ms['compiled']:.2f}x; identical to eager {same}/{len(val)}",
            flush=True,
        )


def int8_rows(checkpoint: str, cache: Path, val: list[str], refs: list[str], repeats: int, bleu_sentences: int) -> None:
    """Weight-only int8 in the compiled step against the fp32 compiled step and CTranslate2's int8."""
    import sacrebleu

    fp32 = Translator.from_pretrained(checkpoint, device="cpu")
    int8 = Translator.from_pretrained(checkpoint, device="cpu", quantize="int8")
    fp32.compile(cache_dir=cache, native=False), int8.compile(cache_dir=cache, native=False)
    ct2 = ct2_convert.load(ct2_convert.convert(fp32, Path(tempfile.mkdtemp(prefix="ct2-")) / "model"), "int8", 1)
    few = val[:30]
    for beams, name in ((1, "greedy, batch 1"), (4, "beam 4, one sentence at a time")):

        def ct2_one(sentence, beams=beams):
            tokens = ct2_convert.source_tokens(fp32, sentence)
            return ct2.translate_batch([tokens], beam_size=beams, max_decoding_length=2 * len(tokens) + 10)

        t = interleaved(
            {
                "fp32": lambda: [fp32.translate(s, num_beams=beams) for s in few],
                "int8": lambda: [int8.translate(s, num_beams=beams) for s in few],
                "ct2": lambda: [ct2_one(s) for s in few],
            },
            repeats,
        )
        ms = {k: v / len(few) * 1000 for k, v in t.items()}
        print(
            f"   {name}: compiled fp32 {ms['fp32']:.1f}, compiled int8 {ms['int8']:.1f}, CTranslate2 int8 "
            f"{ms['ct2']:.1f} ms/sentence; int8 / CTranslate2 int8 {ms['int8'] / ms['ct2']:.2f}x",
            flush=True,
        )
    a = [fp32.translate(s, num_beams=4) for s in val[:bleu_sentences]]
    b = [int8.translate(s, num_beams=4) for s in val[:bleu_sentences]]
    print(
        f"   val BLEU, {bleu_sentences} sentences, beam 4 one at a time: compiled fp32 "
        f"{sacrebleu.corpus_bleu(a, [refs[:bleu_sentences]]).score:.2f}, compiled int8 "
        f"{sacrebleu.corpus_bleu(b, [refs[:bleu_sentences]]).score:.2f}; identical {sum(x == y for x, y in zip(a, b))}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=30)
    parser.add_argument(
        "--int8", action="store_true", help="only the int8 rows (weight-only int8 in the compiled step)"
    )
    parser.add_argument("--bleu-sentences", type=int, default=1014)
    parser.add_argument("--speed-only", action="store_true", help="only the speed rows (no compile times, no RSS)")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="compiled-cache-"))
    if args.int8:
        torch.set_num_threads(1)
        val = data.load_split(data.find_corpus(args.data_dir), "val")
        print(f"int8, 1 thread, medians of {args.repeats}:", flush=True)
        return int8_rows(args.checkpoint, cache, val.src, val.tgt, args.repeats, args.bleu_sentences)
    if not args.speed_only:
        compile_and_memory_rows(args.checkpoint, cache, args.data_dir)
    val = data.load_split(data.find_corpus(args.data_dir), "val").src[: args.sentences]
    torch.set_num_threads(1)  # compiled for one thread, as the app's calls run (a compiled step keeps its threads)
    eager = Translator.from_pretrained(args.checkpoint, device="cpu")
    compiled = Translator.from_pretrained(args.checkpoint, device="cpu")
    compiled.compile(cache_dir=cache, native=False)
    ct2_dir = ct2_convert.convert(eager, Path(tempfile.mkdtemp(prefix="ct2-")) / "model")
    print(f"1 thread, fp32, {len(val)} val sentences, medians of {args.repeats}:", flush=True)
    rows(eager, compiled, ct2_convert.load(ct2_dir, "float32", 1), val, args.repeats)
    token = statistics.median(token_ms(compiled) for _ in range(3))
    weights, bw = decoder_bytes(eager), bandwidth_gb_s()
    print(
        f"physical limit, greedy token: {weights / 1e6:.1f} MB of decoder weights / {bw:.1f} GB/s = "
        f"{weights / bw / 1e6:.2f} ms from memory; the compiled token: {token:.2f} ms (the weights fit in the "
        "CPU's caches, so it can run below that)"
    )


def compile_and_memory_rows(checkpoint: str, cache: Path, data_dir: str | None) -> None:
    """Build and load times with an empty and a filled `cache` (which it fills), and the peak RSS rows."""
    cold, first_cold = compile_seconds(checkpoint, cache)
    warm, first_warm = compile_seconds(checkpoint, cache)
    print(
        f"compile (a child process builds the package) and load, one thread: empty cache {cold:.0f} s, "
        f"package in the cache {warm:.1f} s "
        f"(first translation after: {first_cold * 1000:.0f} / {first_warm * 1000:.0f} ms)",
        flush=True,
    )
    (eager_mb, _), (compiled_mb, _) = (peak_rss_mb(checkpoint, cache, data_dir, c) for c in (False, True))
    building_mb, builder_mb = peak_rss_mb(checkpoint, Path(tempfile.mkdtemp(prefix="compiled-cold-")), data_dir, True)
    print(
        f"peak RSS, 30 val sentences at beam 4, fresh process: eager {eager_mb:.0f} MB, compiled {compiled_mb:.0f} MB "
        f"({compiled_mb / eager_mb:.2f}x); building the package first: {building_mb:.0f} MB "
        f"({building_mb / eager_mb:.2f}x), and the child process that builds it {builder_mb:.0f} MB",
        flush=True,
    )


def token_ms(translator: Translator) -> float:
    """ms per decoder token of greedy, batch 1, 40 tokens forced long (max_new_tokens, no early end)."""
    src = torch.tensor([translator.encode_source("Ein Mann fährt Fahrrad.")[0]])
    generate(translator.model, src, max_new_tokens=40, min_new_tokens=40)
    start = time.perf_counter()
    generate(translator.model, src, max_new_tokens=40, min_new_tokens=40)
    encode = time.perf_counter()
    translator.model.encode(src)
    return (encode - start - (time.perf_counter() - encode)) / 40 * 1000


if __name__ == "__main__":
    main()
