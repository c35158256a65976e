"""ui/routed.py: the shipped captions and everyday checkpoints behind the router, each sentence translated once by
the model its route names, in order; text written in one case recased first; text that is not German named; a
captions checkpoint without a usable guess refused by name."""

import shutil
from pathlib import Path

import pytest

from model import CheckpointError
from ui.routed import RoutedTranslator, Router, checked_choice

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS, EVERYDAY = ROOT / "checkpoints" / "de-en", ROOT / "checkpoints" / "de-en-everyday"
TEXTS = [
    "Ein Hund rennt über eine Wiese.",
    "Wo ist der Bahnhof?",
    "Zwei Männer spielen Fußball im Park.",
    "Ich möchte ein Bier.",
    "",
]


@pytest.fixture(scope="module")
def both():
    return RoutedTranslator.from_pretrained(CAPTIONS, EVERYDAY, device="cpu")


@pytest.fixture(scope="module")
def router():
    return Router.of_checkpoint(CAPTIONS)


def test_each_text_goes_to_the_model_whose_german_it_reads_like(both):
    assert [both.route(t) for t in TEXTS] == ["captions", "everyday", "captions", "everyday", "captions"]
    out = both.translate(TEXTS, num_beams=2)
    alone = {name: t.translate(TEXTS, num_beams=2) for name, t in both.translators.items()}
    models = {"captions": "default", "everyday": "everyday"}
    assert out == [alone[models[both.route(t)]][i] for i, t in enumerate(TEXTS)]
    assert out[3] == "I want a beer." and out[4] == "" and alone["default"][3] != out[3]
    assert both.translate("Wo ist der Bahnhof?", num_beams=2) == out[1]
    assert both.translate("Wo ist der Bahnhof?", num_beams=2, model="default") == alone["default"][1] != out[1]
    with pytest.raises(TypeError, match="expected text"):
        both.route(3)


def test_the_tutorials_lowercase_sentence_is_read_with_its_capitals(both, router):
    route = router.route("ich möchte ein bier")
    assert route.text == "Ich möchte ein Bier" and route.recased == [("ich", "Ich"), ("bier", "Bier")]
    assert route.model == "everyday" and "beer" in both.translate("ich möchte ein bier", num_beams=2)
    shouted = router.route("WO IST DER BAHNHOF?")
    assert shouted.text == "Wo ist der Bahnhof?" and shouted.model == "everyday"
    assert router.route("Ein Mann fährt Fahrrad.").recased == []  # written with capitals: left as it is


def test_a_lowercase_paragraph_is_split_where_its_sentences_end(router):
    assert router.split("wo ist der bahnhof? ein mann fährt fahrrad.") == [
        ("wo ist der bahnhof?", "Wo ist der Bahnhof?"),
        ("ein mann fährt fahrrad.", "Ein Mann fährt Fahrrad."),
    ]
    routes = [
        router.route(read, written=written)
        for written, read in router.split("wo ist der bahnhof? ein mann fährt fahrrad.")
    ]
    assert [r.model for r in routes] == ["everyday", "default"]
    assert routes[1].recased == [("ein", "Ein"), ("mann", "Mann"), ("fahrrad", "Fahrrad")]


@pytest.mark.parametrize(
    "text, why",
    [
        ("안녕하세요, 저는 학생입니다.", "script"),
        ("こんにちは。", "script"),
        ("私は学生です。", "script"),
        ("Where is the station?", "english"),
        ("The weather is nice today.", "english"),
        ("😀😀😀", "no letters"),
        ("12345", "no letters"),
    ],
)
def test_text_that_is_not_german_is_named_and_still_translated_by_the_default_model(router, text, why):
    route = router.route(text)
    assert (route.reads_like, route.why, route.model) == ("not German", why, "default")


@pytest.mark.parametrize(
    "written, read",
    [
        ("你好，我是学生。", "你好，我是学生。"),
        ("我們說過這個東西.", "我们说过这个东西。"),  # Traditional, and an ASCII full stop after Han
        ("我喜欢Python!", "我喜欢Python!"),
        ("臺灣 的 天氣 很好", "台湾的天气很好"),
    ],
)
def test_chinese_is_named_and_goes_to_the_chinese_model_in_simplified_characters(router, written, read):
    chinese = Router(router.domain, router.language, router.truecaser, chinese=True)
    route = chinese.route(written)
    assert (route.reads_like, route.model, route.text, route.written) == ("Chinese", "zh-en", read, written)
    without = router.route(written)  # no Chinese model: still named, and the default model guesses
    assert (without.reads_like, without.model) == ("Chinese", "default")


def test_a_paragraph_mixing_german_and_chinese_routes_each_sentence(router):
    chinese = Router(router.domain, router.language, router.truecaser, chinese=True)
    text = "Ich möchte ein Bier. 我想要一杯啤酒。你好吗？Wo ist der Bahnhof?"
    routes = [chinese.route(read, written=written) for written, read in chinese.split(text)]
    assert [r.model for r in routes] == ["everyday", "zh-en", "zh-en", "everyday"]
    assert [r.text for r in routes[1:3]] == ["我想要一杯啤酒。", "你好吗？"]
    assert chinese.route("Ich möchte ein Bier.", "zh-en").model == "zh-en"
    assert chinese.route("Ich möchte ein Bier.", "zh-en").reads_like != "Chinese"
    with pytest.raises(ValueError, match="no Chinese model"):
        router.route("我想要一杯啤酒。", "zh-en")


def test_full_width_marks_end_sentences_and_are_read_as_plain_ones(router):
    assert router.route("Ich möchte ein Bier。").text == "Ich möchte ein Bier."
    assert [read for _, read in router.split("Ich möchte ein Bier。Wo ist der Bahnhof？")] == [
        "Ich möchte ein Bier.",
        "Wo ist der Bahnhof?",
    ]


def test_a_model_is_forced_by_name_and_a_wrong_name_is_refused(router):
    assert router.route("Wo ist der Bahnhof?", "default").model == "default"
    assert router.route("Wo ist der Bahnhof?", "default").forced
    assert router.route("Ein Hund rennt.", "everyday").model == "everyday"
    with pytest.raises(ValueError, match="model must be one of auto, default, everyday, zh-en, got 'big'"):
        checked_choice("big")
    with pytest.raises(ValueError, match="no everyday model"):
        Router(everyday=False).route("Wo ist der Bahnhof?", "everyday")
    assert Router(everyday=False).route("Wo ist der Bahnhof?").model == "default"


def test_a_captions_checkpoint_without_its_guess_is_refused_by_name(tmp_path):
    folder = tmp_path / "de-en"
    shutil.copytree(CAPTIONS, folder, ignore=shutil.ignore_patterns("domain.json.gz", "snapshots"))
    with pytest.raises(CheckpointError, match="has no usable domain.json.gz"):
        RoutedTranslator.from_pretrained(folder, EVERYDAY)
    (folder / "domain.json.gz").write_bytes(b"not gzip")
    with pytest.raises(CheckpointError, match="has no usable domain.json.gz"):
        RoutedTranslator.from_pretrained(folder, EVERYDAY)
