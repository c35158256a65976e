"""Our decoder against CTranslate2 holding the same weights (bench/ct2_convert.py), on Multi30k val.

    python bench/versus_ct2.py [--threads 1 2] [--repeats 5] [--bleu-sentences 1014]
    (also part 4 of bench/decode.py)

Rows, each a ratio ours / CTranslate2 measured side by side in one process, interleaved, medians,
at each thread count, fp32 against fp32 and our int8 against CTranslate2's int8:
- greedy, batch 1, 30 val sentences: ms/sentence
- beam 4, 128 val sentences in batches of 64: sentences/s
- peak RSS translating those 128 sentences: each engine in a fresh subprocess
- val BLEU (beam 4)
and, for us alone, explain() (decode + teacher-forced pass with maps) against translate().
Both engines get the same source ids and the same length limit (2 x source + 10 tokens).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import ct2_convert  # noqa: E402
from ct2_rss import peak_rss_mb  # noqa: E402
from timing import interleaved  # noqa: E402

import data  # noqa: E402
from lens.maps import explain  # noqa: E402
from translation import Translator  # noqa: E402

CT2_TYPE = {"fp32": "float32", "int8": "int8"}


class Engines:
    """Our translator and CTranslate2's for one precision, fed the same ids."""

    def __init__(self, checkpoint: str, ct2_dir: Path, precision: str, threads: int):
        quantize = "int8" if precision == "int8" else None
        self.ours = Translator.from_pretrained(checkpoint, device="cpu", quantize=quantize)
        self.ct2 = ct2_convert.load(ct2_dir, CT2_TYPE[precision], threads)

    def ours_translate(self, sentences: list[str], num_beams: int, batch_size: int) -> list[str]:
        return self.ours.translate(sentences, num_beams=num_beams, batch_size=batch_size)

    def ct2_translate(self, sentences: list[str], num_beams: int, batch_size: int) -> list[str]:
        return ct2_convert.translate(self.ours, self.ct2, sentences, num_beams, batch_size)


def speed_rows(engines: Engines, val: list[str], repeats: int) -> dict:
    """Greedy batch 1 (ms/sentence) and beam 4 batches of 64 (sentences/s), ours and CTranslate2."""
    s30, s128 = val[:30], val[:128]

    def greedy(translate):
        return lambda: [translate([s], 1, 1) for s in s30]

    def beam(translate):
        return lambda: translate(s128, 4, 64)

    t = interleaved(
        {
            "greedy ours": greedy(engines.ours_translate),
            "greedy ct2": greedy(engines.ct2_translate),
            "beam ours": beam(engines.ours_translate),
            "beam ct2": beam(engines.ct2_translate),
        },
        repeats,
    )
    same = sum(a == b for a, b in zip(engines.ours_translate(s128, 4, 64), engines.ct2_translate(s128, 4, 64)))
    return {
        "greedy_ms": (t["greedy ours"] / 30 * 1000, t["greedy ct2"] / 30 * 1000),
        "beam_sps": (128 / t["beam ours"], 128 / t["beam ct2"]),
        "same_beam": same,
    }


# What app.py sets through ui/public.limit_malloc_arenas, as environment variables for a child.
APP_MALLOC = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "131072"}


def peak_rss(
    engine: str, precision: str, checkpoint: str, ct2_dir: Path, data_dir: str | None, malloc_env: dict | None = None
) -> float:
    """Peak RSS (MB) of a fresh process that loads one engine and translates 128 val sentences."""
    if engine == "ours":
        command = [__file__, "--rss-child", precision, checkpoint, str(data.find_corpus(data_dir))]
    else:
        folder = data.find_corpus(data_dir)
        val_de = next(str(folder / n) for n in ("val.de.gz", "val.de") if (folder / n).is_file())
        max_len = str(Translator.from_pretrained(checkpoint, device="cpu").config.max_len)
        command = [
            str(ROOT / "bench" / "ct2_rss.py"),
            str(ct2_dir),
            str(Path(checkpoint) / "tokenizer.json"),
            val_de,
            max_len,
            CT2_TYPE[precision],
        ]
    env = {**os.environ, **(malloc_env or {})}
    out = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_rss_mb"]


def rss_child(precision: str, checkpoint: str, data_dir: str) -> None:
    """Our side of `peak_rss`: load, translate 128 val sentences (beam 4, batches of 64), report."""
    torch.set_num_threads(1)
    translator = Translator.from_pretrained(checkpoint, device="cpu", quantize="int8" if precision == "int8" else None)
    translator.translate(load_val(data_dir)[:128], num_beams=4, batch_size=64)
    print(json.dumps({"peak_rss_mb": peak_rss_mb()}))


def bleu(engines: Engines, val, n: int) -> tuple[float, float]:
    from sacrebleu.metrics import BLEU

    refs = [val.tgt[:n]]
    ours = BLEU().corpus_score(engines.ours_translate(val.src[:n], 4, 64), refs).score
    theirs = BLEU().corpus_score(engines.ct2_translate(val.src[:n], 4, 64), refs).score
    return ours, theirs


def explain_ratio(translator: Translator, val: list[str], repeats: int) -> float:
    """explain() over plain translate(), beam 4, one sentence at a time (what the app does)."""
    s30 = val[:30]
    t = interleaved(
        {
            "translate": lambda: [translator.translate(s, num_beams=4) for s in s30],
            "explain": lambda: [explain(translator, s, num_beams=4) for s in s30],
        },
        repeats,
    )
    return t["explain"] / t["translate"]


def load_val(data_dir: str | None):
    return data.load_split(data.find_corpus(data_dir), "val").src


ROWS = ("speed", "rss", "bleu", "explain")


def run(
    checkpoint: str,
    data_dir: str | None,
    threads: list[int],
    repeats: int,
    bleu_sentences: int,
    rows: tuple[str, ...] = ROWS,
) -> None:
    val = data.load_split(data.find_corpus(data_dir), "val")
    ct2_dir = ct2_convert.convert(
        Translator.from_pretrained(checkpoint, device="cpu"), Path(tempfile.mkdtemp(prefix="ct2-")) / "model"
    )
    print(
        f"Against CTranslate2 (converted from {checkpoint}); ours / CTranslate2, interleaved medians "
        f"of {repeats}; ratio > 1 means we take longer (time) or hold more (memory)"
    )
    for n in threads if "speed" in rows else []:
        torch.set_num_threads(n)
        for precision in ("fp32", "int8"):
            speed = speed_rows(Engines(checkpoint, ct2_dir, precision, n), val.src, repeats)
            (g_ours, g_ct2), (b_ours, b_ct2) = speed["greedy_ms"], speed["beam_sps"]
            print(
                f"   {n} thread(s), {precision}: greedy batch 1 {g_ours:.1f} vs {g_ct2:.1f} ms/sentence "
                f"(time ratio {g_ours / g_ct2:.2f}); beam 4 x 64 {b_ours:.1f} vs {b_ct2:.1f} sentences/s "
                f"(time ratio {b_ct2 / b_ours:.2f}); same beam translations {speed['same_beam']}/128"
            )
    torch.set_num_threads(1)
    for precision in ("fp32", "int8") if "rss" in rows else []:
        for malloc, env in (("glibc defaults", None), ("the app's malloc settings", APP_MALLOC)):
            ours, theirs = (peak_rss(e, precision, checkpoint, ct2_dir, data_dir, env) for e in ("ours", "ct2"))
            print(
                f"   peak RSS translating 128 sentences, {precision}, {malloc}: ours {ours:.0f} MB, "
                f"CTranslate2 {theirs:.0f} MB (ratio {ours / theirs:.2f}; each in a fresh process, "
                f"CTranslate2's without torch)"
            )
    for precision in ("fp32", "int8") if "bleu" in rows else []:
        ours, theirs = bleu(Engines(checkpoint, ct2_dir, precision, 1), val, bleu_sentences)
        print(
            f"   val BLEU ({bleu_sentences} sentences, beam 4), {precision}: ours {ours:.2f}, CTranslate2 {theirs:.2f}"
        )
    if "explain" not in rows:
        return
    translator = Translator.from_pretrained(checkpoint, device="cpu")
    print(
        f"   explain() / translate(), beam 4, 30 val sentences one by one: "
        f"{explain_ratio(translator, val.src, repeats):.2f}x"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--rss-child":
        rss_child(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bleu-sentences", type=int, default=1014)
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    args = parser.parse_args()
    run(args.checkpoint, args.data_dir, args.threads, args.repeats, args.bleu_sentences, tuple(args.rows))


if __name__ == "__main__":
    main()
