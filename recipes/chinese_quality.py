"""The Chinese model's figures beyond BLEU: the share of dev sentences it translates word for word as the reference
does (beam search as shipped), and ten sentences a learner would type, with their English.

    python recipes/chinese_quality.py [--checkpoint checkpoints/zh-en] [--zh-dir runs/corpora/tatoeba-zh]

BLEU and chrF on dev and test are the run's own (results.json, the test set scored once at the end of training).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import data
from training.evaluation import translate_all
from translation import Translator

ROOT = Path(__file__).resolve().parents[1]
PROBES = [
    "你好！",
    "谢谢你。",
    "我想要一杯啤酒。",
    "我昨天去了商店。",
    "你叫什么名字？",
    "火车站在哪里？",
    "今天天气很好。",
    "我不知道他为什么没来。",
    "这本书是我朋友昨天送给我的。",
    "你明天可以来我家吗？",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "zh-en"))
    parser.add_argument("--zh-dir")
    parser.add_argument("--beams", type=int, default=None, help="default: the run's chosen decoding")
    args = parser.parse_args(argv)
    try:
        dev = data.load_split(data.find_chinese(args.zh_dir), "dev", "zh")
    except data.CorpusError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    results = json.loads((Path(args.checkpoint) / "results.json").read_text(encoding="utf-8"))
    decoding = results["results"].get("decoding", {})
    beams = args.beams or decoding.get("num_beams", 4)
    penalty = decoding.get("length_penalty", 1.0)
    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    hyps = translate_all(translator, dev.src, "dev", num_beams=beams, length_penalty=penalty, progress=False)
    exact = sum(" ".join(h.split()) == " ".join(r.split()) for h, r in zip(hyps, dev.tgt))
    probes = translator.translate(PROBES, num_beams=beams, length_penalty=penalty)
    print(
        json.dumps(
            {
                "dev": results["results"]["val"],
                "test": results["results"].get("test"),
                "decoding": {"num_beams": beams, "length_penalty": penalty},
                "dev_word_for_word": f"{exact}/{len(hyps)} ({exact / len(hyps):.1%})",
                "probes": dict(zip(PROBES, probes)),
            },
            indent=2,
            ensure_ascii=False,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
