"""The demo for real: app.py launched in a subprocess, driven by gradio_client and by Chromium."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SENTENCE = "Ein Mann fährt Fahrrad."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tiny_checkpoint, tmp_path_factory):
    port = free_port()
    log_path = tmp_path_factory.mktemp("app") / "app.log"
    env = {**os.environ, "MODEL_ID": str(tiny_checkpoint), "GRADIO_SERVER_PORT": str(port),
           "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_ANALYTICS_ENABLED": "False"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 120
    while time.time() < deadline:
        assert proc.poll() is None, log_path.read_text()
        try:
            urllib.request.urlopen(url, timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        raise AssertionError("the app did not start: " + log_path.read_text())
    yield url
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


@pytest.fixture(scope="module")
def reference(tiny_checkpoint):
    from model import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


def test_translate_endpoint_matches_the_translator(client, reference):
    english = client.predict(SENTENCE, "beam search", 4, 1.0, 30, api_name="/translate")
    assert english == reference.translate(SENTENCE, num_beams=4, max_new_tokens=30)
    greedy = client.predict(SENTENCE, "greedy", 4, 1.0, 30, api_name="/translate")
    assert greedy == reference.translate(SENTENCE, num_beams=1, max_new_tokens=30)


def test_explain_endpoint_returns_maps_that_fit_the_tokens(client, reference):
    result = client.predict(SENTENCE, "beam search", 3, 1.0, 20, api_name="/explain")
    S, T = len(result["source_tokens"]), len(result["target_tokens"])
    assert result["source_tokens"][-1] == "</s>" and S == len(reference.encode_source(SENTENCE)[0])
    assert T >= 1 and len(result["decoder_input_tokens"]) == T
    L, H = reference.config.n_encoder_layers, reference.config.n_heads
    assert [len(result["encoder"]), len(result["encoder"][0]), len(result["encoder"][0][0]), len(result["encoder"][0][0][0])] == [L, H, S, S]
    assert [len(result["decoder"][0][0]), len(result["decoder"][0][0][0])] == [T, T]
    assert [len(result["cross"][0][0]), len(result["cross"][0][0][0])] == [T, S]
    assert abs(sum(result["cross"][0][0][0]) - 1) < 1e-4
    assert result["translation"] == reference.translate(SENTENCE, num_beams=3, max_new_tokens=20)


def test_empty_input_gets_a_friendly_message(client):
    from gradio_client.exceptions import AppError

    for text in ("", "   \n\t "):
        with pytest.raises(AppError, match="Please enter some German text"):
            client.predict(text, api_name="/translate")


def test_overlong_input_is_truncated_and_says_so(client, reference):
    text = "Ein Hund läuft über eine grüne Wiese. " * 300  # ~11,000 characters
    result = client.predict(text, "greedy", 1, 1.0, 16, api_name="/explain")
    assert result["truncated"] is True
    assert len(result["source_tokens"]) == reference.config.max_len


@pytest.mark.parametrize("text", ["😀🐶 Привет мир 漢字", "\x00\x07\u200b\ufeff", "ß" * 10_000, "<s></s><pad>"])
def test_odd_unicode_never_crashes_the_server(client, text):
    english = client.predict(text, "greedy", 1, 1.0, 12, api_name="/translate")
    assert isinstance(english, str)


def test_an_exception_in_a_handler_is_a_short_message_and_the_server_keeps_serving(client, reference):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="Sorry, that did not work"):
        client.predict(SENTENCE, "beam search", "many", 1.0, 20, api_name="/translate")  # not a number
    assert client.predict(SENTENCE, "greedy", 1, 1.0, 20, api_name="/translate") == reference.translate(
        SENTENCE, num_beams=1, max_new_tokens=20)


def test_twenty_simultaneous_clients_all_get_correct_answers(server, reference):
    from gradio_client import Client

    sentences = [f"{n} Kinder spielen im Park." for n in ("Zwei", "Drei", "Vier", "Fünf")] * 5
    expected = [reference.translate(s, num_beams=2, max_new_tokens=24) for s in sentences]

    def ask(sentence):
        return Client(server, verbose=False).predict(sentence, "beam search", 2, 1.0, 24, api_name="/translate")

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(ask, sentences))
    assert answers == expected


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed")
def test_a_real_browser_translates_and_draws_the_attention_maps(server):
    from playwright.sync_api import expect, sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        # The app opens its heartbeat stream once it has mounted: from then on typing reaches its state.
        with page.expect_request("**/heartbeat/**", timeout=60_000):
            page.goto(server, wait_until="domcontentloaded")
        page.locator("#source textarea").fill(SENTENCE)
        expect(page.locator("#source textarea")).to_have_value(SENTENCE)
        page.locator("#translate").click()
        english = page.locator("#english textarea")
        try:
            expect(english).not_to_have_value("", timeout=60_000)
        except AssertionError:
            page.screenshot(path=str(SCREENSHOTS / "failed.png"), full_page=True)
            raise
        status = page.locator("#status")
        expect(status).to_contain_text("ms", timeout=30_000)
        single = page.locator("#single-plot .main-svg").first
        expect(single).to_be_visible(timeout=30_000)
        expect(page.locator("#single-plot")).to_contain_text("Cross-attention")
        page.wait_for_timeout(1500)  # let the figure finish its transition before the picture
        page.screenshot(path=str(SCREENSHOTS / "01-translated-cross-attention.png"), full_page=True)

        with page.expect_download(timeout=30_000) as download:
            page.locator("#download-json").click()
        exported = json.loads(Path(download.value.path()).read_text())
        assert exported["translation"] == page.locator("#english textarea").input_value()
        assert len(exported["cross"][0][0]) == len(exported["target_tokens"])

        page.locator("#kind").get_by_text("Encoder self-attention").click()
        expect(page.locator("#single-plot")).to_contain_text("Encoder self-attention", timeout=30_000)
        page.locator("#layer").get_by_text("layer 1").click()
        expect(page.locator("#single-plot")).to_contain_text("layer 1", timeout=30_000)
        page.locator("#head").get_by_text("head 2").click()
        expect(page.locator("#single-plot")).to_contain_text("head 2", timeout=30_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(SCREENSHOTS / "02-encoder-layer1-head2.png"), full_page=True)

        page.locator("#source textarea").fill("   ")
        page.locator("#translate").click()
        expect(page.locator("#status")).to_contain_text("Type a German sentence", timeout=30_000)
        browser.close()
    assert (SCREENSHOTS / "02-encoder-layer1-head2.png").stat().st_size > 10_000
