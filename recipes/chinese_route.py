"""How well the router tells Chinese from the rest: precision and recall of its "Chinese" class on dev sets, and the
share of mixed German-Chinese paragraphs whose every sentence goes to the right model.

    python recipes/chinese_route.py [--zh-dir runs/corpora/tatoeba-zh] [--data-dir ../shared/data/multi30k]

Chinese: the Tatoeba dev split's Chinese side (Simplified) and the same written in Traditional characters (OpenCC's
s2t), and the Chinese lines of recipes/everyday/not_german.txt. Not Chinese: Multi30k's German val captions (as
written and in lowercase), the English of both dev sets, and the Japanese and Korean lines below and in not_german.txt.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import data
from tokenizer.chinese import KANA_HANGUL, han_count
from ui.routed import Router

ROOT = Path(__file__).resolve().parents[1]
KOREAN = ["맥주 한 잔 주세요.", "역이 어디에 있어요?", "저는 학생입니다.", "오늘 날씨가 좋네요.", "감사합니다."]


def traditional(lines: list[str]) -> list[str]:
    from opencc import OpenCC

    to_traditional = OpenCC("s2t")
    return [to_traditional.convert(line) for line in lines]


def labelled_sets(zh_dir: str | None, data_dir: str | None) -> dict[str, tuple[list[str], bool]]:
    """{name: (texts, whether they are Chinese)}."""
    chinese_dev = data.load_split(data.find_chinese(zh_dir), "dev", "zh")
    german = data.load_split(data.find_corpus(data_dir), "val")
    other = (ROOT / "recipes" / "everyday" / "not_german.txt").read_text(encoding="utf-8").splitlines()
    return {
        "tatoeba dev (Simplified)": (chinese_dev.src, True),
        "tatoeba dev (Traditional)": (traditional(chinese_dev.src), True),
        "not_german.txt Chinese": ([x for x in other if han_count(x) and not KANA_HANGUL.search(x)], True),
        "multi30k val German": (german.src, False),
        "multi30k val German, lowercase": ([s.lower() for s in german.src], False),
        "english (both dev sets)": (german.tgt + chinese_dev.tgt, False),
        "japanese and korean": ([x for x in other if KANA_HANGUL.search(x)] + KOREAN, False),
    }


def mixed_paragraphs(router: Router, german: list[str], chinese: list[str]) -> float:
    """The share of paragraphs "German Chinese German" whose three sentences are each routed as written (each caption
    given the full stop many of Multi30k's lack: without one, nothing marks where the German ends)."""
    right = 0
    german = [g if g.rstrip()[-1:] in ".!?" else g.rstrip() + "." for g in german]
    for g1, z, g2 in zip(german, chinese, german[1:]):
        routes = [router.route(read, written=written) for written, read in router.split(f"{g1} {z}{g2}")]
        right += [r.model == "zh-en" for r in routes] == [False, True, False]
    return right / max(1, min(len(german) - 1, len(chinese)))


def report(router: Router, sets: dict[str, tuple[list[str], bool]]) -> dict:
    said = {name: [router.route(t).reads_like == "Chinese" for t in texts] for name, (texts, _) in sets.items()}
    true_pos = sum(sum(s) for name, s in said.items() if sets[name][1])
    false_pos = sum(sum(s) for name, s in said.items() if not sets[name][1])
    positives = sum(len(texts) for texts, chinese in sets.values() if chinese)
    german = sets["multi30k val German"][0]
    chinese = sets["tatoeba dev (Simplified)"][0]
    return {
        "chinese": {name: f"{sum(s)}/{len(s)}" for name, s in said.items()},
        "precision": round(true_pos / max(1, true_pos + false_pos), 4),
        "recall": round(true_pos / max(1, positives), 4),
        "mixed_paragraphs_right": round(mixed_paragraphs(router, german[:300], chinese[:300]), 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zh-dir")
    parser.add_argument("--data-dir")
    args = parser.parse_args(argv)
    router = Router.of_checkpoint(ROOT / "checkpoints" / "de-en", chinese=True)
    try:
        sets = labelled_sets(args.zh_dir, args.data_dir)
    except data.CorpusError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(json.dumps(report(router, sets), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
