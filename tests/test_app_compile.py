"""app.py with ATTENTION_LENS_COMPILE=1 and an empty compile cache: the page answers from the start, the native
search is built into the cache in the background, and the answers after it are the answers before it."""

import time

import pytest

from ui.app_process import launch_app

pytestmark = [pytest.mark.server, pytest.mark.slow]
BUILD_S = 120  # the library builds in about 5 s alone; the machine may be busy


def test_the_app_answers_and_builds_the_native_search_in_the_background(tiny_checkpoint, tmp_path):
    from gradio_client import Client

    cache = tmp_path / "compiled"
    proc, url = launch_app(
        tmp_path / "app.log",
        MODEL_ID=str(tiny_checkpoint),
        ATTENTION_LENS_COMPILE="1",
        ATTENTION_LENS_COMPILE_CACHE=str(cache),
    )
    try:
        client = Client(url, verbose=False)
        first = client.predict("Ein Mann fährt Fahrrad.", "beam search", 4, 1.0, 30, api_name="/translate")
        assert isinstance(first, str) and first.strip()
        deadline = time.time() + BUILD_S
        while time.time() < deadline and not list(cache.glob("native-*.so")):
            time.sleep(0.5)
        assert list(cache.glob("native-*.so")), (tmp_path / "app.log").read_text()[-2000:]
        time.sleep(1)  # the library written, then loaded with the model's weights
        assert client.predict("Ein Mann fährt Fahrrad.", "beam search", 4, 1.0, 30, api_name="/translate") == first
    finally:
        proc.terminate()
        proc.wait(timeout=30)
