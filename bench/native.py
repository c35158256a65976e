"""The native search (compiled/native_search.py) against CTranslate2 and our other paths, one thread, side by side.

    pip install -r requirements-bench.txt
    python bench/native.py [--repeats 5] [--sentences 30] [--bleu-sentences 1014]

Rows, each measured in one process, the engines interleaved, medians of --repeats:
- greedy, batch 1 and beam 4 one sentence at a time (30 val sentences): ms/sentence;
- beam 4, 128 val sentences in batches of 64: sentences/s;
for our eager search, the native search in fp32 and in int8, CTranslate2 fp32 and int8; then whether the native fp32 outputs equal the eager ones, val BLEU of each, the build and load time of the
native library, and the peak RSS of a fresh process translating 30 sentences at beam 4.
Both engines get the same source ids and the same length limit (2 x source + 10 tokens).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import ct2_convert  # noqa: E402
from timing import corpus_dir, interleaved  # noqa: E402

import data  # noqa: E402
from translation import Translator  # noqa: E402


def ct2_translator(ours: Translator, ct2):
    return lambda sentences, num_beams, batch_size: ct2_convert.translate(ours, ct2, sentences, num_beams, batch_size)


def ours(translator: Translator):
    return lambda sentences, num_beams, batch_size: translator.translate(
        sentences, num_beams=num_beams, batch_size=batch_size
    )


def speed(engines: dict, val: list[str], n: int, repeats: int) -> None:
    few, many = val[:n], val[:128]
    for beams, label in ((1, "greedy, batch 1"), (4, "beam 4, one sentence at a time")):
        t = interleaved(
            {name: (lambda f=f, b=beams: [f([s], b, 1) for s in few]) for name, f in engines.items()}, repeats
        )
        ms = {name: seconds / n * 1000 for name, seconds in t.items()}
        print(f"{label} (ms/sentence): " + ", ".join(f"{k} {v:.2f}" for k, v in ms.items()), flush=True)
        ratios(ms, lower_is_faster=True)
    t = interleaved({name: (lambda f=f: f(many, 4, 64)) for name, f in engines.items()}, repeats)
    sps = {name: 128 / seconds for name, seconds in t.items()}
    print(
        "beam 4, 128 sentences in batches of 64 (sentences/s): " + ", ".join(f"{k} {v:.1f}" for k, v in sps.items()),
        flush=True,
    )
    ratios({k: 1 / v for k, v in sps.items()}, lower_is_faster=True)


def ratios(times: dict, lower_is_faster: bool) -> None:
    for ours_name in [k for k in times if not k.startswith("CTranslate2")]:
        parts = [f"{ours_name} / {k} {times[ours_name] / times[k]:.2f}x" for k in times if k.startswith("CTranslate2")]
        print("   time " + ", ".join(parts), flush=True)


def identical(eager: Translator, native: Translator, val: list[str], n: int) -> None:
    for beams, label in ((1, "greedy"), (4, "beam 4")):
        same = sum(eager.translate(s, num_beams=beams) == native.translate(s, num_beams=beams) for s in val[:n])
        print(f"native fp32 identical to eager, {label}, one at a time: {same}/{n}", flush=True)
    a, b = (
        eager.translate(val[:128], num_beams=4, batch_size=64),
        native.translate(val[:128], num_beams=4, batch_size=64),
    )
    print(
        f"native fp32 identical to eager, beam 4, 128 in batches of 64: {sum(x == y for x, y in zip(a, b))}/128",
        flush=True,
    )


def bleu(engines: dict, val: list[str], refs: list[str], n: int) -> None:
    import sacrebleu

    outputs = {name: f(val[:n], 4, 64) for name, f in engines.items()}
    scores = {name: sacrebleu.corpus_bleu(out, [refs[:n]]).score for name, out in outputs.items()}
    print(f"val BLEU, {n} sentences, beam 4: " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()), flush=True)


CHILD = """
import resource, sys, torch
sys.path.insert(0, {root!r})
torch.set_num_threads(1)
import data
from translation import Translator
t = Translator.from_pretrained({checkpoint!r}, device="cpu", quantize={quantize!r})
if {native}:
    assert t.compile(cache_dir={cache!r}).ready
for s in data.load_split({data_dir!r}, "val").src[:30]:
    t.translate(s, num_beams=4)
settled = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS")][0] / 1024
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, settled)
"""


def rss_mb(checkpoint: str, data_dir: str, cache: Path, native: bool, quantize: str | None) -> tuple[float, float]:
    """A fresh process's peak RSS, and its RSS after the 30 sentences."""
    code = CHILD.format(
        root=str(ROOT), checkpoint=checkpoint, quantize=quantize, native=native, cache=str(cache), data_dir=data_dir
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[-2]), float(out[-1])


def build_rows(checkpoint: str, data_dir: str) -> Path:
    cache = Path(tempfile.mkdtemp(prefix="native-"))
    for label in ("empty cache (builds the library)", "from the cache"):
        translator = Translator.from_pretrained(checkpoint, device="cpu")
        start = time.perf_counter()
        translator.compile(cache_dir=cache)
        print(f"native search ready, {label}: {time.perf_counter() - start:.2f} s", flush=True)
    for native, quantize in ((False, None), (True, None), (True, "int8")):
        peak, settled = rss_mb(checkpoint, data_dir, cache, native, quantize)
        print(
            f"RSS, 30 sentences at beam 4, {'native' if native else 'eager'} {quantize or 'fp32'}: peak {peak:.0f} MB, "
            f"after {settled:.0f} MB",
            flush=True,
        )
    return cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=30)
    parser.add_argument("--bleu-sentences", type=int, default=1014)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data_dir = str(corpus_dir(args.data_dir) or sys.exit("Multi30k not found: --data-dir or $MULTI30K_DIR"))
    val_split = data.load_split(data_dir, "val")
    val, refs = val_split.src, val_split.tgt
    cache = build_rows(args.checkpoint, data_dir)
    eager = Translator.from_pretrained(args.checkpoint, device="cpu")
    native = Translator.from_pretrained(args.checkpoint, device="cpu")
    native.compile(cache_dir=cache)
    native8 = Translator.from_pretrained(args.checkpoint, device="cpu", quantize="int8")
    native8.compile(cache_dir=cache)
    ct2_dir = ct2_convert.convert(eager, Path(tempfile.mkdtemp(prefix="ct2-")) / "model")
    engines = {"eager": ours(eager), "native fp32": ours(native), "native int8": ours(native8)}
    engines["CTranslate2 fp32"] = ct2_translator(eager, ct2_convert.load(ct2_dir, "float32", 1))
    engines["CTranslate2 int8"] = ct2_translator(eager, ct2_convert.load(ct2_dir, "int8", 1))
    identical(eager, native, val, args.sentences)
    speed(engines, val, args.sentences, args.repeats)
    bleu({k: v for k, v in engines.items() if k != "eager"}, val, refs, args.bleu_sentences)


if __name__ == "__main__":
    main()
