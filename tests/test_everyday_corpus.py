"""The everyday corpus: extraction rules on a small synthetic dictionary, the fixed held-out splits,
the command's errors, and a run that trains on Multi30k + Ding (and one that fine-tunes a checkpoint)."""

import json
import shutil
from pathlib import Path

import pytest
import torch

import data
import train
from corpora import everyday_corpus as ding
from tests.corpus import DATA_DIR, needs_corpus
from translation import Translator

# Lines in the dictionary's format: German parts | ... :: English parts | ..., aligned by position.
DICTIONARY = """\
# Version :: devel 2023-01-30
# License :: GPL Version 2 or later; GNU General Public License
Lust auf etw. haben {v} | Hast du Lust auf ein Bier? | Ich hätte Lust, … zu tun. :: to fancy sth. | Do you fancy a beer? | I fancy doing …
Wetter {n} | Das Wetter ist wechselhaft. [ugs.] :: weather | The weather is unsettled. [coll.]
Bahnhof {m} | Wo ist der Bahnhof? :: station | Where’s the station?
Ahnung {f} | Hast du eine Ahnung, wo er ist? :: idea | Have you any idea where he is?; Do you know where he is?
Sorge {f} | Keine Bange!; Keine Sorge! :: worry | No worries!
Auto {n} | Er fährt (gern) Auto. :: car | He (likes to) drive.
Haus {n} | Das Haus ist alt/neu. :: house | The house is old/new.
Bier {n} | Hast du Lust auf ein Bier? :: beer | Do you fancy a beer?
Eins | Zwei :: one
kaputt {adj} | Das ist kaputt. :: broken
Katze {f} | Ja. :: cat | Yes.
"""


def write_dictionary(folder: Path, text: str = DICTIONARY) -> Path:
    path = folder / "de-en"
    path.write_text(text, encoding="utf-8")
    return path


def test_extraction_keeps_clean_sentences_and_says_why_the_rest_went():
    found = ding.extract_pairs(DICTIONARY.splitlines())
    assert found.pairs == [
        ("Hast du Lust auf ein Bier?", "Do you fancy a beer?"),
        ("Das Wetter ist wechselhaft.", "The weather is unsettled."),  # markup removed on both sides
        ("Wo ist der Bahnhof?", "Where's the station?"),  # typographic apostrophe made plain
        ("Hast du eine Ahnung, wo er ist?", "Have you any idea where he is?"),  # alternatives expanded
        ("Hast du eine Ahnung, wo er ist?", "Do you know where he is?"),
        ("Keine Bange!", "No worries!"),
        ("Keine Sorge!", "No worries!"),
    ]
    assert found.dropped["duplicate"] == 1  # the beer sentence of the second entry
    assert found.dropped["alternatives or placeholders"] == 3  # "… zu tun", "(gern)", "alt/neu"
    assert found.dropped["misaligned parts"] == 2  # three German parts for one English, two for one
    assert found.dropped["too short or too long"] == 1  # "Ja."


CHOICES = """\
Gefängnis {n} | Er war ein Jahr im Gefängnis. :: prison | He spent a year in prison/jail.
Haussuche {f} | Wie geht’s (Dir/Euch) mit der Haussuche? :: house-hunting | How’s the house-hunting going?
Sofa {n} | Der Bauer/Das Sofa ächzte. :: sofa | The farmer/the sofa groaned.
Kontakt {m} | Sie stehen in Briefkontakt/brieflichem Kontakt. :: contact | They are in correspondence.
Gerät {n} | Das Gerät kostet 150 Euro. :: device | The device retails at/for 150 euros.
Kaution {f} | Er kam gegen Kaution / gegen Sicherheitsleistung frei. :: bail | He was released on bail.
Bier {n} | Ich möchte ein Bier. :: beer | I'd like a beer.
Wie geht's?; Wie geht's so (immer)? :: How are things?; How is it going?
geht {v} | Wie geht's? :: goes | How are things?
"""


def test_parts_with_choices_give_one_reading_for_training_when_its_scope_is_clear():
    found = ding.extract_pairs(CHOICES.splitlines())
    # the parts without choices; a sentence that is also an earlier part's reading is still a sentence
    assert found.pairs == [("Ich möchte ein Bier.", "I'd like a beer."), ("Wie geht's?", "How are things?")]
    assert found.recovered == [
        ("Er war ein Jahr im Gefängnis.", "He spent a year in prison."),  # the first of two words
        ("Wie geht's mit der Haussuche?", "How's the house-hunting going?"),  # optional words left out
        ("Das Gerät kostet 150 Euro.", "The device retails at 150 euros."),
        ("Wie geht's?", "How are things?"),  # the first alternative of a part dropped for its second one
    ]  # not: a choice of phrases ("Der Bauer/Das Sofa", "Briefkontakt/brieflichem Kontakt", " / ")
    assert ding.one_reading("Das Haus ist alt/neu.", choices=False) is None  # German choices are never resolved


def test_recovered_pairs_join_training_only_and_never_move_dev_or_test():
    pairs = [(f"Satz Nummer {i} ist hier.", f"Sentence number {i} is here.") for i in range(100)]
    plain, _ = ding.split_pairs(pairs, dev_size=10, test_size=10)
    held = plain["dev"][0]
    recovered = [
        ("Ein neuer Satz ist hier.", "A new sentence is here."),
        (held[0], "Another reading."),
        ("Noch ein Satz.", held[1]),
        ("Ein Hund rennt.", "A dog runs."),
        plain["train"][0],
    ]
    splits, excluded = ding.split_pairs(pairs, exclude={"a dog runs"}, dev_size=10, test_size=10, recovered=recovered)
    assert splits["dev"] == plain["dev"] and splits["test"] == plain["test"]
    assert sorted(splits["train"]) == sorted(plain["train"] + [("Ein neuer Satz ist hier.", "A new sentence is here.")])
    assert (
        excluded == 3
    )  # a held-out German sentence, a held-out English one, a Multi30k sentence; the duplicate is no exclusion


@pytest.mark.parametrize(
    "text, problem",
    [
        ("Das ist gut", "not a sentence"),
        ("das ist gut.", "not a sentence"),
        ("Er sagt etw. Neues.", "alternatives or placeholders"),
        ("Gut.", "too short or too long"),
        ("Er kam trotzdem.", None),
        ("„Komm her!“", None),
        ("2003 kam er.", None),
    ],
)
def test_sentence_rules(text, problem):
    assert ding.sentence_problem(ding.clean(text)) == problem


def test_splits_are_fixed_by_the_sentence_not_the_file_order_and_never_overlap():
    pairs = [(f"Satz Nummer {i} ist hier.", f"Sentence number {i} is here.") for i in range(300)]
    pairs += [("Satz Nummer 7 ist hier.", "Here is sentence seven.")]  # a second translation of one sentence
    splits, _ = ding.split_pairs(pairs, dev_size=40, test_size=30)
    again, _ = ding.split_pairs(list(reversed(pairs)), dev_size=40, test_size=30)
    assert {k: sorted(v) for k, v in splits.items()} == {k: sorted(v) for k, v in again.items()}
    assert (len(splits["dev"]), len(splits["test"])) == (40, 30)
    german = {name: {de for de, _ in pairs} for name, pairs in splits.items()}
    assert (
        not german["train"] & german["dev"]
        and not german["train"] & german["test"]
        and not german["dev"] & german["test"]
    )
    english = {name: {en for _, en in pairs} for name, pairs in splits.items()}
    assert not english["train"] & (english["dev"] | english["test"])
    assert len(splits["train"]) + 70 in (len(pairs), len(pairs) - 1)  # a held-out sentence keeps one translation


def test_pairs_that_are_in_multi30k_dev_or_test_are_excluded():
    pairs = [("Ein Hund rennt.", "A dog runs."), ("Wo ist der Bahnhof?", "Where is the station?")]
    splits, excluded = ding.split_pairs(pairs, exclude={"a dog runs"}, dev_size=0, test_size=0)
    assert excluded == 1 and splits["train"] == [("Wo ist der Bahnhof?", "Where is the station?")]


@needs_corpus
def test_the_command_writes_the_splits_and_records_source_and_license(tmp_path):
    text = DICTIONARY + "".join(
        f"Wort{i} {{n}} | Das ist Satz {i}. :: word{i} | This is sentence {i}.\n" for i in range(50)
    )
    path = write_dictionary(tmp_path, text)
    with pytest.raises(ding.DingError, match="sha256 .* pass --any-version"):
        ding.build(tmp_path / "out", str(path), str(DATA_DIR))
    with pytest.raises(ding.DingError, match="too few for a dev set of 1000"):
        ding.build(tmp_path / "out", str(path), str(DATA_DIR), any_version=True)
    source = ding.build(tmp_path / "out", str(path), str(DATA_DIR), any_version=True, dev_size=10, test_size=10)
    assert source["license"] == "GPL-2.0-or-later" and source["dictionary_sha256"] == ding.sha256_of(path)
    # 56 German sentences, one with two translations; one reading of "Er fährt (gern) Auto." joins training
    assert source["splits"] == {
        "dev": 10,
        "test": 10,
        "train": 38,
        "phrases": 0,
        "words": 0,
    }  # no headword used 5 times
    assert source["pairs_recovered"] == 1
    assert json.loads((tmp_path / "out" / "SOURCE.json").read_text())["pairs_found"] == 57
    everything = {split: data.load_split(tmp_path / "out", split) for split in ("train", "dev", "test")}
    german = [de for corpus in everything.values() for de in corpus.src]
    english = [en for corpus in everything.values() for en in corpus.tgt]
    assert "Wo ist der Bahnhof?" in german and english[german.index("Wo ist der Bahnhof?")] == "Where's the station?"


def test_missing_files_and_tools_are_clear_errors(tmp_path, monkeypatch, capsys):
    assert ding.main(["--dictionary", str(tmp_path / "nope"), "--output", str(tmp_path / "o")]) == 1
    assert "--dictionary" in capsys.readouterr().err
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(ding.DingError, match="apt-get is not installed"):
        ding.obtain_dictionary(None, tmp_path)
    with pytest.raises(data.CorpusError, match="python -m corpora.everyday_corpus"):
        data.find_ding(tmp_path / "nothing")
    empty = write_dictionary(tmp_path, "# only a comment\nHaus {n} :: house\n")
    with pytest.raises(ding.DingError, match="no example sentences"):
        ding.build(tmp_path / "o", str(empty), any_version=True)


def make_tiny_ding(folder: Path) -> Path:
    folder.mkdir(parents=True)
    pairs = [(f"Ich möchte {n} Bierchen.", f"I would like {n} beers.") for n in range(40)]
    for split in ("train", "dev", "test"):
        (folder / f"{split}.de").write_text("".join(de + "\n" for de, _ in pairs), encoding="utf-8")
        (folder / f"{split}.en").write_text("".join(en + "\n" for _, en in pairs), encoding="utf-8")
    (folder / "SOURCE.json").write_text(json.dumps({"license": ding.LICENSE, "package": "test"}))
    return folder


TINY = [
    "--max-train-pairs",
    "200",
    "--max-steps",
    "4",
    "--eval-every",
    "2",
    "--max-eval-sentences",
    "8",
    "--batch-tokens",
    "1024",
    "--num-beams",
    "2",
    "--length-penalties",
    "1.0",
    "--threads",
    "1",
    "--snapshot-steps",
    "none",
    "--precision",
    "fp32",
]


@needs_corpus
def test_a_run_on_captions_and_everyday_sentences_scores_both_and_records_the_corpus(tmp_path):
    ding_dir = make_tiny_ding(tmp_path / "ding")
    out = tmp_path / "mixed"
    assert (
        train.main(
            [
                "--data-dir",
                str(DATA_DIR),
                "--corpus",
                "multi30k+ding",
                "--ding-dir",
                str(ding_dir),
                "--ding-repeat",
                "3",
                "--output",
                str(out),
                "--work-dir",
                str(tmp_path / "w"),
                *TINY,
                "--vocab-size",
                "600",
                "--d-model",
                "32",
                "--n-heads",
                "2",
                "--n-layers",
                "1",
                "--d-ff",
                "64",
            ]
        )
        == 0
    )
    results = json.loads((out / "results.json").read_text())
    assert {"val", "test", "everyday_dev", "everyday_test"} <= set(results["results"])
    assert results["data"]["train_pairs"] == 200 + 3 * 40
    assert results["data"]["everyday"]["license"] == "GPL-2.0-or-later" and results["data"]["everyday"]["repeat"] == 3
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert any("everyday_dev_bleu" in r and "val_bleu_mean" in r for r in records)
    assert (
        len((out / "everyday_test_hypotheses.txt").read_text().splitlines()) == 8
    )  # the first 8, as --max-eval-sentences says
    vocabulary = json.loads((out / "tokenizer.json").read_text())["model"]["vocab"]
    assert any("Bierchen" in piece for piece in vocabulary)  # the vocabulary learned the everyday text too


@needs_corpus
def test_fine_tuning_starts_from_the_checkpoint_and_keeps_its_shape_and_vocabulary(tmp_path, tiny_checkpoint, capsys):
    ding_dir = make_tiny_ding(tmp_path / "ding")
    tiny_checkpoint = Path(shutil.copytree(tiny_checkpoint, tmp_path / "parent"))  # with a record of its training:
    parent = {"command": "train.py --max-steps 7", "steps": 7, "wall_time_s": 36.0}
    (tiny_checkpoint / "results.json").write_text(json.dumps({"training": parent}))
    common = [
        "--data-dir",
        str(DATA_DIR),
        "--corpus",
        "multi30k+ding",
        "--ding-dir",
        str(ding_dir),
        "--init-from",
        str(tiny_checkpoint),
        "--work-dir",
        str(tmp_path / "w"),
        *TINY,
    ]
    with pytest.raises(SystemExit):
        train.main([*common, "--output", str(tmp_path / "x"), "--d-model", "64"])  # contradicts the checkpoint
    assert "--d-model 64 contradicts --init-from" in capsys.readouterr().err
    out = tmp_path / "tuned"
    assert train.main([*common, "--output", str(out), "--lr", "1e-9", "--warmup", "1"]) == 0
    assert (out / "tokenizer.json").read_bytes() == (tiny_checkpoint / "tokenizer.json").read_bytes()
    assert json.loads((out / "config.json").read_text())["d_model"] == 32
    record = json.loads((out / "results.json").read_text())["training"]["started_from"]
    assert record == {"folder": str(tiny_checkpoint), **parent}  # the card tells the history:
    assert (
        f"- Started from: the weights of `{tiny_checkpoint}` (7 steps, 0.01 h; `train.py --max-steps 7`)"
        in (out / "README.md").read_text()
    )
    before, after = Translator.from_pretrained(tiny_checkpoint), Translator.from_pretrained(out)
    for (name, a), b in zip(before.model.state_dict().items(), after.model.state_dict().values()):
        assert (a - b).abs().max() < 1e-4, name  # a learning rate of 1e-9 leaves the starting weights


def test_train_only_decoder_keeps_the_encoder_and_embedding_of_the_start(tmp_path, tiny_checkpoint):
    out = tmp_path / "tuned"
    assert (
        train.main(
            [
                "--data-dir",
                str(DATA_DIR),
                "--init-from",
                str(tiny_checkpoint),
                "--work-dir",
                str(tmp_path / "w"),
                *TINY,
                "--output",
                str(out),
                "--lr",
                "1e-2",
                "--warmup",
                "1",
                "--train-only",
                "decoder",
            ]
        )
        == 0
    )
    before, after = Translator.from_pretrained(tiny_checkpoint), Translator.from_pretrained(out)
    moved = {name: not torch.equal(a, after.model.state_dict()[name]) for name, a in before.model.state_dict().items()}
    assert not any(m for name, m in moved.items() if not name.startswith("decoder_layers.")), moved
    assert any(m for name, m in moved.items() if name.startswith("decoder_layers.")), moved
    assert "--train-only decoder" in json.loads((out / "results.json").read_text())["training"]["command"]


def test_phrase_pairs_are_multi_word_entries_that_are_no_sentences():
    lines = [
        "kleines Bier {n} [cook.]; Seidel Bier {n} | zwei kleine Biere :: half a pint of beer [Br.] | two halves",
        "Bier {n} | Hast du Lust auf ein Bier? :: beer | Do you fancy a beer?",
        "etw. gern haben {v} | mit jdm. reden :: to like sth. | to talk to sb.",
    ]
    found = ding.extract_pairs(lines)
    assert found.phrases == [("kleines Bier", "half a pint of beer"), ("zwei kleine Biere", "two halves")]
    assert found.pairs == [("Hast du Lust auf ein Bier?", "Do you fancy a beer?")]  # sentences stay sentences


def test_headwords_are_one_german_word_and_the_common_ones_are_kept():
    lines = [
        "Bahnhof {m} /Bhf./ | Wo ist der Bahnhof? :: railway station [Br.]; station /Sta./ | Where is the station?",
        "gehen {vi} | Geh nach Hause! :: to go {went; gone}; to walk | Go home!",
        "kaputt {adj} :: broken [coll.]",
        "Eisenbahnzug {m}; Zug {m} (Bahn) :: train",
        "etw. gern haben {v} :: to like sth.",
        "1A :: first-class",
        "Trophoblasttumor {m} [med.] :: trophoblastic neoplasm [med.]",
        "Bahnhofsuhr {f} | Am Bahnhof ist eine Uhr. :: station clock | There is a clock at the station.",
    ]
    found = ding.extract_pairs(lines)
    assert found.words == [
        ("Bahnhof", "railway station"),
        ("Bahnhof", "station"),  # abbreviations off
        ("gehen", "go"),
        ("gehen", "walk"),  # "to" off a verb; "{went; gone}" is no alternative
        ("kaputt", "broken"),
        ("Eisenbahnzug", "train"),
        ("Zug", "train"),  # the sense "(Bahn)" off
        ("Trophoblasttumor", "trophoblastic neoplasm"),
        ("Bahnhofsuhr", "station clock"),
    ]  # no placeholders, no digit first
    assert ding.common_words(found.words, lines, min_uses=2) == [("Bahnhof", "railway station"), ("Bahnhof", "station")]


def test_each_headword_keeps_the_sense_its_example_sentences_use():
    senses = [
        ("Zug", "lineament"),
        ("Zug", "platoon"),
        ("Zug", "train"),
        ("Bahnhof", "railway station"),
        ("Bahnhof", "station"),
        ("Kiefer", "jaw"),
        ("Kiefer", "pine"),
    ]
    sentences = [
        ("Der Zug kommt.", "The train is coming."),
        ("Wo ist der Bahnhof?", "Where is the station?"),
        ("Nimm den Zug!", "Take the train!"),
        ("Der Zug marschiert.", "The platoon marches."),
    ]
    assert ding.likeliest_senses(senses, sentences) == [
        ("Zug", "train"),  # two sentences against one
        ("Bahnhof", "station"),  # every word of a sense must be in the English: no "railway" here
        ("Kiefer", "jaw"),
    ]  # no sentence tells: the dictionary's first


@needs_corpus
def test_phrases_and_headwords_join_the_training_data_only_when_asked(tmp_path, capsys):
    ding_dir = make_tiny_ding(tmp_path / "ding")
    (ding_dir / "phrases.de").write_text("kleines Bierchen\nzwei Bierchen\n", encoding="utf-8")
    (ding_dir / "phrases.en").write_text("a small beer\ntwo beers\n", encoding="utf-8")
    (ding_dir / "words.de").write_text("Bierchen\nBahnhof\n", encoding="utf-8")
    (ding_dir / "words.en").write_text("beer\nstation\n", encoding="utf-8")
    common = [
        "--data-dir",
        str(DATA_DIR),
        "--corpus",
        "multi30k+ding",
        "--ding-dir",
        str(ding_dir),
        *TINY,
        "--vocab-size",
        "600",
        "--d-model",
        "32",
        "--n-heads",
        "2",
        "--n-layers",
        "1",
        "--d-ff",
        "64",
        "--skip-test",
    ]
    out = tmp_path / "with-phrases"
    assert (
        train.main([*common, "--ding-phrases", "--ding-words", "--output", str(out), "--work-dir", str(tmp_path / "w")])
        == 0
    )
    assert json.loads((out / "results.json").read_text())["data"]["train_pairs"] == 200 + 40 + 2 + 2
    from training_data.evidence import load_evidence

    counts = {"multi30k": 0, "ding": 40, "ding_phrases": 2, "ding_words": 1}
    assert load_evidence(out).word("bierchen")["counts"] == counts
    for flag in ("--ding-phrases", "--ding-words"):
        with pytest.raises(SystemExit):
            train.main(["--data-dir", str(DATA_DIR), flag, "--output", str(tmp_path / "x"), *TINY])
        assert f"{flag} needs --corpus multi30k+ding" in capsys.readouterr().err


@needs_corpus
def test_a_caption_tag_starts_every_captions_german_and_no_everyday_sentence(tmp_path, capsys):
    ding_dir = make_tiny_ding(tmp_path / "ding")
    out = tmp_path / "tagged"
    assert (
        train.main(
            [
                "--data-dir",
                str(DATA_DIR),
                "--corpus",
                "multi30k+ding",
                "--ding-dir",
                str(ding_dir),
                *TINY,
                "--vocab-size",
                "600",
                "--d-model",
                "32",
                "--n-heads",
                "2",
                "--n-layers",
                "1",
                "--d-ff",
                "64",
                "--skip-test",
                "--caption-tag",
                "<CAP>",
                "--output",
                str(out),
                "--work-dir",
                str(tmp_path / "w"),
            ]
        )
        == 0
    )
    from training_data.evidence import load_evidence

    assert load_evidence(out).word("cap")["counts"] == {"multi30k": 200, "ding": 0}  # once a caption, never elsewhere
    for bad in ("<C AP>", " <CAP>", ""):
        with pytest.raises(SystemExit):
            train.main(
                [
                    "--data-dir",
                    str(DATA_DIR),
                    "--corpus",
                    "multi30k+ding",
                    "--caption-tag",
                    bad,
                    "--output",
                    str(tmp_path / "x"),
                    *TINY,
                ]
            )
        assert "--caption-tag is one word" in capsys.readouterr().err
