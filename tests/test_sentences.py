"""tokenizer/sentences.py: sentences split where a reader would split them, and nowhere else."""

import pytest

from tokenizer.sentences import split_sentences


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Ein Hund rennt. Eine Katze schläft.", ["Ein Hund rennt.", "Eine Katze schläft."]),
        (
            "Wo ist der Hund? Er spielt! Dann schläft er…  Gut.",
            ["Wo ist der Hund?", "Er spielt!", "Dann schläft er…", "Gut."],
        ),
        (
            "Tiere, z. B. Hunde und Katzen, spielen im Park. Kinder sehen zu.",
            ["Tiere, z. B. Hunde und Katzen, spielen im Park.", "Kinder sehen zu."],
        ),
        (
            "Dr. Müller geht mit Prof. Schmidt spazieren. Sie reden.",
            ["Dr. Müller geht mit Prof. Schmidt spazieren.", "Sie reden."],
        ),
        (
            "Sie kaufen Äpfel, Birnen usw. und gehen heim. Dann essen sie.",
            ["Sie kaufen Äpfel, Birnen usw. und gehen heim.", "Dann essen sie."],
        ),
        ("Der Hund wiegt 3.5 Kilo. Er ist klein.", ["Der Hund wiegt 3.5 Kilo.", "Er ist klein."]),
        (
            "Am 1. Mai tanzen die Leute. Der 3. Platz geht an ihn.",
            ["Am 1. Mai tanzen die Leute.", "Der 3. Platz geht an ihn."],
        ),
        ("Das war im Jahr 1990. Dann kam der Winter.", ["Das war im Jahr 1990.", "Dann kam der Winter."]),
        ("Er sagt: „Komm her.“ Dann geht er.", ["Er sagt: „Komm her.“", "Dann geht er."]),
        ('"Hallo!" ruft der Junge. "Komm!" Sie kommt.', ['"Hallo!" ruft der Junge.', '"Komm!"', "Sie kommt."]),
        ("Ein Mann singt. 2 Kinder tanzen.", ["Ein Mann singt.", "2 Kinder tanzen."]),
        ("J. S. Bach spielt Orgel.", ["J. S. Bach spielt Orgel."]),
        (
            "Ein Hund rennt\nEine Katze schläft\n\n  Ein Vogel singt.  ",
            ["Ein Hund rennt", "Eine Katze schläft", "Ein Vogel singt."],
        ),
        ("ohne Punkt am Ende", ["ohne Punkt am Ende"]),
        # A one- or two-digit number, then a full stop: a sentence end before a word that starts sentences.
        ("Ich bin 25. Ich wohne in Berlin.", ["Ich bin 25.", "Ich wohne in Berlin."]),
        ("Mein Sohn ist 7. Er geht zur Schule.", ["Mein Sohn ist 7.", "Er geht zur Schule."]),
        ("Wir treffen uns am 3. Dann fahren wir.", ["Wir treffen uns am 3. Dann fahren wir."]),  # "am 3.": an ordinal
        (
            "Der 1. Mai ist ein Feiertag. Der 2. Platz geht an sie.",
            ["Der 1. Mai ist ein Feiertag.", "Der 2. Platz geht an sie."],
        ),
        ("1. Mai: Wir tanzen.", ["1. Mai: Wir tanzen."]),
        ("Sie wurde 3. Das war gut.", ["Sie wurde 3.", "Das war gut."]),
        # Full-width marks (Chinese, Japanese) end a sentence with no space after them.
        ("你好。我是学生！你呢？", ["你好。", "我是学生！", "你呢？"]),
        ("Ich möchte ein Bier。Wo ist der Bahnhof？", ["Ich möchte ein Bier。", "Wo ist der Bahnhof？"]),
        ("「你好。」他说。", ["「你好。」", "他说。"]),
        ("Ein Mann fährt Fahrrad. 你好。", ["Ein Mann fährt Fahrrad.", "你好。"]),
        ("", []),
        ("   \n\t ", []),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_splitting_loses_no_characters_but_blanks():
    text = "Ein Hund rennt. Tiere, z. B. Hunde, spielen am 1. Mai!  Er sagt: „Komm.“ Gut?"
    assert "".join(split_sentences(text)).replace(" ", "") == text.replace(" ", "")


def test_split_sentences_rejects_non_text():
    with pytest.raises(TypeError, match="expects text"):
        split_sentences(None)


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "Please enter a German sentence"),
        ("   ", "Please enter a German sentence"),
        ("Ein Hund. Eine Katze.", "stepping through takes one sentence; this text has 2"),
        ("Ein Hund läuft. " * 40, "stepping through takes one sentence of at most 400"),
        ("Ein \ud800 Hund.", "not valid Unicode"),
    ],
)
def test_one_sentence_is_checked_in_one_place(text, message):
    from ui.runtime import one_sentence

    with pytest.raises(ValueError, match=message):
        one_sentence(text, 400, "app.what.step")
    assert one_sentence("Ich bin 25.", 400) == "Ich bin 25."


def test_a_refusal_names_its_message_so_the_page_says_it_in_the_visitors_language():
    from ui.locales import Refused, message, said
    from ui.runtime import one_sentence

    with pytest.raises(Refused) as caught:
        one_sentence("Ein Hund. Eine Katze.", 400, "app.what.step")
    answer = said(caught.value)
    assert answer["error"] == "stepping through takes one sentence; this text has 2: keep one"
    assert (answer["error_key"], answer["error_values"], answer["error_words"]) == (
        "app.refusal.one_only",
        {"sentences": 2},
        {"what": "app.what.step"},
    )
    chinese = message("app.refusal.one_only", "zh-CN", sentences=2, what=message("app.what.step", "zh-CN"))
    assert chinese == "逐步解码每次只处理一句，这段文字有 2 句：请只留一句。"
    assert said(ValueError("plain")) == {"error": "plain"}


def test_the_page_refuses_too_much_text_by_one_rule_for_characters_and_sentences(tiny_translator):
    from ui.pair import Pair
    from ui.translate import page_handler

    run = page_handler(Pair.single(tiny_translator))
    too_many = run("Ein Hund rennt. " * 17, "greedy", 1, 1.0, 8)
    too_long = run("Ein Hund rennt über die Wiese und " * 200, "greedy", 1, 1.0, 8)
    assert "text has 17 sentences; at most 16" in too_many["error"] and "split it" in too_many["error"]
    assert "at most 5,000 are translated at once: shorten it" in too_long["error"]
    assert "sentences" in run("Ein Hund rennt. " * 16, "greedy", 1, 1.0, 8)  # 16 fit
