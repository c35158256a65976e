"""The API for real: app.py launched in a subprocess with a tiny checkpoint, driven by gradio_client.
The page in a browser is tests/test_ui_page.py."""

import json
import re
import shutil
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lens.maps import explain
from ui.app_process import running_app

pytestmark = [pytest.mark.server]
ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "Ein Mann fährt Fahrrad."


@pytest.fixture(scope="module")
def checkpoint_with_evidence(tiny_checkpoint, tmp_path_factory):
    """The tiny checkpoint with an evidence index of three captions and an alarm rule that words decide."""
    from training_data.alarm import ALARM_FILE
    from training_data.domain import build_counts, write_counts
    from training_data.evidence import build_index, write_index

    folder = tmp_path_factory.mktemp("evidence") / "de-en"
    shutil.copytree(tiny_checkpoint, folder)
    write_index(
        folder,
        build_index(
            {
                "multi30k": (
                    ["Ein Mann fährt Fahrrad.", "Ein Mann liest.", "Zwei Hunde."],
                    ["A man rides a bike.", "A man reads.", "Two dogs."],
                )
            }
        ),
    )
    (folder / ALARM_FILE).write_text(
        json.dumps(
            {"rule": {"confidence_below": -100.0, "rare_below": 1, "rare_share_above": 0.5, "unseen_pairs_above": 1.01}}
        )
    )
    write_counts(
        folder,
        build_counts(
            ["Ein Mann fährt Fahrrad.", "Ein Mann liest.", "Zwei Hunde."],
            ["Ich möchte ein Bier.", "Wo bist du?", "Ich habe Zeit."],
        ),
    )
    return folder


@pytest.fixture(scope="module")
def server(checkpoint_with_evidence, tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("app") / "app.log", MODEL_ID=str(checkpoint_with_evidence)) as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


@pytest.fixture(scope="module")
def reference(tiny_checkpoint):
    from translation import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


def test_translate_endpoint_matches_the_translator(client, reference):
    english = client.predict(SENTENCE, "beam search", 4, 1.0, 30, api_name="/translate")
    assert english == reference.translate(SENTENCE, num_beams=4, max_new_tokens=30)
    greedy = client.predict(SENTENCE, "greedy", 4, 1.0, 30, api_name="/translate")
    assert greedy == reference.translate(SENTENCE, num_beams=1, max_new_tokens=30)


def test_explain_endpoint_returns_maps_that_fit_the_tokens(client, reference):
    answer = client.predict(SENTENCE, "beam search", 3, 1.0, 20, api_name="/explain")
    assert set(answer) == {"translation", "sentences", "left_out"}  # each sentence once, nothing twice
    assert len(answer["sentences"]) == 1 and answer["sentences"][0]["source"] == SENTENCE
    result = answer["sentences"][0]
    S, T = len(result["source_tokens"]), len(result["target_tokens"])
    assert result["source_tokens"][-1] == "</s>" and S == len(reference.encode_source(SENTENCE)[0])
    assert T >= 1 and len(result["decoder_input_tokens"]) == T
    L, H = reference.config.n_encoder_layers, reference.config.n_heads
    assert [
        len(result["encoder"]),
        len(result["encoder"][0]),
        len(result["encoder"][0][0]),
        len(result["encoder"][0][0][0]),
    ] == [L, H, S, S]
    assert [len(result["decoder"][0][0]), len(result["decoder"][0][0][0])] == [T, T]
    assert [len(result["cross"][0][0]), len(result["cross"][0][0][0])] == [T, S]
    assert abs(sum(result["cross"][0][0][0]) - 1) < 1e-2
    assert result["translation"] == reference.translate(SENTENCE, num_beams=3, max_new_tokens=20)
    expected = explain(reference, SENTENCE, num_beams=3, max_new_tokens=20).target_probs
    assert len(result["target_probs"]) == T and all(0 < p <= 1 for p in result["target_probs"])
    assert max(abs(a - b) for a, b in zip(result["target_probs"], expected)) < 1e-3
    weights = [w for layer in result["encoder"] for head in layer for row in head for w in row]
    assert all(round(w, 3) == w for w in weights) and any(0 < w < 1 for w in weights)  # compact: 3 decimals


def test_explain_gives_each_sentence_its_training_evidence_and_alarm(client):
    result = client.predict("Ein Mann fährt Fahrrad. Ich möchte ein Bier.", "greedy", 1, 1.0, 10, api_name="/explain")
    known, unknown = result["sentences"]
    assert [(w["word"], w["count"]) for w in known["evidence"]] == [
        ("ein", 2),
        ("mann", 2),
        ("fährt", 1),
        ("fahrrad", 1),
    ]
    assert known["evidence"][1]["examples"] == [
        {"de": "Ein Mann liest.", "en": "A man reads."},
        {"de": "Ein Mann fährt Fahrrad.", "en": "A man rides a bike."},
    ]
    assert known["unfamiliar"] is False and known["reasons"] == []
    assert [w["unseen"] for w in unknown["evidence"]] == [True, True, False, True]
    assert unknown["unfamiliar"] is True and "'möchte' (never)" in unknown["reasons"][0]
    assert (
        known["reads_like"] == "captions" and unknown["reads_like"] == "everyday"
    )  # training_data/domain.py's guess, routed
    assert "Ich" in unknown["route"]["words"] and "domain" not in unknown
    assert known["model"] == unknown["model"] == "default"  # this app has no everyday model: both by the default


def test_a_paragraph_is_translated_sentence_by_sentence(client, reference):
    sentences = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Gras.", "Eine Frau liest."]
    expected = [reference.translate(s, num_beams=2, max_new_tokens=20) for s in sentences]
    english = client.predict(" ".join(sentences), "beam search", 2, 1.0, 20, api_name="/translate")
    assert english == " ".join(e for e in expected if e)
    result = client.predict(" ".join(sentences), "beam search", 2, 1.0, 20, api_name="/explain")
    assert [s["source"] for s in result["sentences"]] == sentences
    assert [s["translation"] for s in result["sentences"]] == expected
    assert result["translation"] == english and result["left_out"] == 0


def test_empty_input_gets_a_friendly_message(client):
    from gradio_client.exceptions import AppError

    for text in ("", "   \n\t "):
        with pytest.raises(AppError, match="Please enter some German text"):
            client.predict(text, api_name="/translate")


def test_overlong_input_is_truncated_and_says_so(client, reference):
    text = "Ein Hund läuft über eine grüne Wiese und " * 100  # one sentence of ~4,000 characters
    result = client.predict(text, "greedy", 1, 1.0, 16, api_name="/explain")["sentences"][0]
    assert result["truncated"] is True
    assert len(result["source_tokens"]) == reference.config.max_len


def test_translate_refuses_a_sentence_it_would_cut(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="longer than the model's limit"):
        client.predict("ß" * 4_000, "greedy", 1, 1.0, 12, api_name="/translate")


@pytest.mark.parametrize("text", ["😀🐶 Привет мир 漢字", "\x00\x07\u200b\ufeff", "ß" * 40, "<s></s><pad>"])
def test_odd_unicode_never_crashes_the_server(client, text):
    english = client.predict(text, "greedy", 1, 1.0, 12, api_name="/translate")
    assert isinstance(english, str)


def test_a_nan_length_penalty_is_refused_with_its_name(server):
    """JSON has no NaN, so gradio_client cannot send one; a raw call can (Python's json reads it)."""
    import json

    body = json.dumps(
        {"data": [SENTENCE, "beam search", 4, float("nan"), 20, ""]}
    ).encode()  # raw calls send every argument
    request = urllib.request.Request(
        server + "gradio_api/call/translate", data=body, headers={"Content-Type": "application/json"}
    )
    event_id = json.loads(urllib.request.urlopen(request, timeout=30).read())["event_id"]
    stream = urllib.request.urlopen(f"{server}gradio_api/call/translate/{event_id}", timeout=60).read().decode()
    assert "event: error" in stream and "length_penalty must be a finite number" in stream, stream


def test_too_long_a_text_is_refused_before_any_work(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="at most 5,000 are translated at once"):
        client.predict("Ein Hund. " * 600, "greedy", 1, 1.0, 16, api_name="/translate")


@pytest.mark.parametrize(
    "args, message",
    [
        (("beam search", "many", 1.0, 20), "num_beams must be a finite number"),
        (("beam search", 4, -1.0, 20), "length_penalty must be between 0.0 and 3.0"),
        (("sideways", 4, 1.0, 20), "decoding must be one of"),
    ],
)
def test_bad_arguments_are_refused_by_name_and_the_server_keeps_serving(client, reference, args, message):
    from gradio_client.exceptions import AppError

    for endpoint in ("/translate", "/explain"):
        with pytest.raises(AppError, match=message):
            client.predict(SENTENCE, *args, api_name=endpoint)
    assert client.predict(SENTENCE, "greedy", 1, 1.0, 20, api_name="/translate") == reference.translate(
        SENTENCE, num_beams=1, max_new_tokens=20
    )


def test_twenty_simultaneous_clients_all_get_correct_answers(server, reference):
    from gradio_client import Client

    sentences = [f"{n} Kinder spielen im Park." for n in ("Zwei", "Drei", "Vier", "Fünf")] * 5
    expected = [reference.translate(s, num_beams=2, max_new_tokens=24) for s in sentences]

    def ask(sentence):
        return Client(server, verbose=False).predict(sentence, "beam search", 2, 1.0, 24, api_name="/translate")

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(ask, sentences))
    assert answers == expected


THREADS_CHILD = """
import torch
default = torch.get_num_threads()
import app
print(default, torch.get_num_threads())
"""


@pytest.mark.slow
def test_model_calls_share_the_cores_and_a_bad_thread_count_is_refused(tiny_checkpoint):
    import os
    import subprocess
    import sys

    from ui.public import BATCH_WORKERS

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "MODEL_ID": str(tiny_checkpoint), "GRADIO_ANALYTICS_ENABLED": "False"}
    env.pop("ATTENTION_LENS_THREADS", None)
    done = subprocess.run(
        [sys.executable, "-c", THREADS_CHILD], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    default, used = map(int, done.stdout.split()[-2:])
    assert used == max(1, default // BATCH_WORKERS)
    refused = subprocess.run(
        [sys.executable, "-c", THREADS_CHILD],
        cwd=root,
        capture_output=True,
        text=True,
        env={**env, "ATTENTION_LENS_THREADS": "two"},
        timeout=300,
    )
    assert refused.returncode != 0 and "ATTENTION_LENS_THREADS must be a number of threads" in refused.stderr


def test_qkv_endpoint_opens_a_row_whose_weights_are_the_maps(client):
    explained = client.predict(SENTENCE, "greedy", 1, 1.0, 10, api_name="/explain")["sentences"][0]
    opened = client.predict(SENTENCE, "cross", 2, 3, 2, "greedy", 1, 1.0, 10, api_name="/qkv")
    assert opened["column_tokens"] == explained["source_tokens"] and len(opened["q"]) == len(opened["k"][0])
    assert max(abs(a - b) for a, b in zip(opened["weights"], explained["cross"][1][2][1])) < 1e-3
    with pytest.raises(Exception, match="head must be a whole number from 1 to 4"):
        client.predict(SENTENCE, "cross", 1, 9, 1, "greedy", 1, 1.0, 10, api_name="/qkv")


def test_logit_lens_endpoint_ends_in_the_models_own_probabilities(client):
    explained = client.predict(SENTENCE, "greedy", 1, 1.0, 10, api_name="/explain")["sentences"][0]
    lens = client.predict(SENTENCE, "greedy", 1, 1.0, 10, api_name="/logit_lens")
    assert lens["target_tokens"] == explained["target_tokens"] and lens["stages"][0] == "embedding"
    assert max(abs(a - b) for a, b in zip(lens["prob"][-1], explained["target_probs"])) < 1e-3


def test_contributions_endpoint_gives_each_word_shares_that_sum_to_one(client):
    explained = client.predict(SENTENCE, "greedy", 1, 1.0, 10, api_name="/explain")["sentences"][0]
    result = client.predict(SENTENCE, "greedy", 1, 1.0, 10, api_name="/contributions")
    assert (
        result["target_tokens"] == explained["target_tokens"] and result["source_tokens"] == explained["source_tokens"]
    )
    assert all(abs(sum(s) + sum(t) - 1.0) < 1e-2 for s, t in zip(result["source"], result["target"]))
    layers = explained["cross"]  # [layer][head][step][German token]: the map the shares are compared with
    mean = [
        [
            sum(h[t][s] for layer in layers for h in layer) / sum(len(layer) for layer in layers)
            for s in range(len(result["source_tokens"]))
        ]
        for t in range(len(result["target_tokens"]))
    ]
    assert max(abs(a - b) for row, ref in zip(result["cross_attention"], mean) for a, b in zip(row, ref)) < 2e-3
    with pytest.raises(Exception, match="num_beams must be"):
        client.predict(SENTENCE, "beam search", 99, 1.0, 10, api_name="/contributions")


def test_contrast_endpoint_explains_why_the_word_and_not_another(client):
    result = client.predict(SENTENCE, 1, "woman", "greedy", 1, 1.0, 10, api_name="/contrast")
    target = result["logit_diff"] - result["baseline_logit_diff"]
    assert abs(sum(result["source_attribution"]) - target) <= 0.05 * max(1.0, abs(target))
    assert set(result["heads"]) == {"encoder", "decoder", "cross"}
    with pytest.raises(Exception, match="step must be a whole number from 1 to"):
        client.predict(SENTENCE, 40, "woman", "greedy", 1, 1.0, 10, api_name="/contrast")


def test_patch_endpoint_answers_where_the_choice_sits_or_says_why_not(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="the corrupted sentence is the clean one"):
        client.predict(SENTENCE, SENTENCE, 1, "greedy", 1, 1.0, 10, api_name="/patch")
    with pytest.raises(AppError, match="as many pieces"):
        client.predict(SENTENCE, "Ein Mann fährt ein sehr großes Fahrrad.", 1, "greedy", 1, 1.0, 10, api_name="/patch")


def i18n_key(text) -> str | None:
    """The key of a text Gradio writes in the visitor's language (gr.I18n's metadata), None for plain text."""
    if isinstance(text, dict) and text.get("__type__") == "translation_metadata":
        return text["key"]
    if isinstance(text, str) and text.startswith("__i18n__"):
        return json.loads(text[len("__i18n__") :])["key"]
    return None


def test_every_text_gradio_shows_on_the_page_is_a_message_of_every_locale(server):
    """Labels, infos, placeholders, buttons, accordions and choices: gr.I18n keys (ui/locales.py) that every
    catalogue has; nothing Gradio shows is English only (a hidden component aside)."""
    from ui.locales import LOCALES, catalogue

    with urllib.request.urlopen(server.rstrip("/") + "/config", timeout=30) as answer:
        config = json.load(answer)
    plain, keys = [], set()
    for component in config["components"]:
        props = component.get("props", {})
        if props.get("visible") in (False, "hidden") or component["type"] == "api":  # gr.api: the endpoints', unseen
            continue
        texts = [(name, props.get(name)) for name in ("label", "info", "placeholder") if props.get(name)]
        if component["type"] == "button":
            texts.append(("value", props.get("value")))
        texts += [("choice", pair[0]) for pair in props.get("choices") or []]
        for name, text in texts:
            key = i18n_key(text)
            if key:
                keys.add(key)
            elif isinstance(text, str) and re.search(r"[A-Za-z]{2}", text):
                plain.append(f"{component['type']} {props.get('elem_id')} {name}: {text!r}")
    assert plain == [], "English that Gradio would show in every language:\n" + "\n".join(plain)
    assert len(keys) >= 30
    for locale in LOCALES:
        assert sorted(keys - set(catalogue(locale))) == [], locale
