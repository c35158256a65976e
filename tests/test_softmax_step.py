"""The picture's Logits → softmax step gives each piece its probability under the softmax over the whole vocabulary,
at every temperature of its slider, on both front doors: in the app (the server's /taps sends each row's log_z) and on
the static site (the page's model computes it). Each figure is held to the Python model's own full softmax, to 1e-3."""

import pytest
import torch

from tests.test_site import pytestmark, shipped_translator  # noqa: F401  (the fixtures)
from tests.test_steps_page import TEXT, opened
from tests.test_ui_page import CHECKPOINT, browser, open_page, server, translate  # noqa: F401

TEMPERATURES = (0.5, 1.0, 2.0)
BARS = "(s) => s.map((b) => [b.querySelector('.al-step-piece').textContent, Number(b.dataset.p)])"


def full_softmax(translator, text: str, temperature: float) -> torch.Tensor:
    """The first output row's probabilities over all V pieces (it depends on the German and <s> only)."""
    src, _ = translator.encode_source(text)
    with torch.inference_mode():
        logits = translator.model(torch.tensor([src]), torch.tensor([[translator.config.bos_id]]))[0, 0].float()
    return torch.softmax(logits / temperature, dim=-1)


def shown_at(page, temperature: float) -> list[tuple[str, float]]:
    slider = "[data-concept='logits-softmax'] .al-step-temperature"
    page.fill(slider, str(temperature))
    page.dispatch_event(slider, "input")
    return page.eval_on_selector_all("[data-concept='logits-softmax'] .al-step-bar", BARS)


def assert_full_softmax(page, translator) -> None:
    for temperature in TEMPERATURES:
        expected = full_softmax(translator, TEXT, temperature)
        best = expected.topk(10)
        shown = shown_at(page, temperature)
        assert [p for _, p in shown] == pytest.approx(best.values.tolist(), abs=1e-3), temperature


def test_the_sites_softmax_step_is_over_the_whole_vocabulary(site, browser, shipped_translator):  # noqa: F811
    url, _ = site
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.ready", timeout=60_000)
    page.evaluate("(text) => window.attentionLens.translate(text, {num_beams: 1, model: 'default'})", TEXT)
    opened(page, "logits-softmax", {"kind": "decoder", "row": 0})
    assert_full_softmax(page, shipped_translator)
    page.close()


def test_the_apps_softmax_step_is_over_the_whole_vocabulary(browser, server):  # noqa: F811
    from translation import Translator
    from ui.routed import Router

    model = Router.of_checkpoint(CHECKPOINT).route(TEXT).model
    translator = Translator.from_pretrained(CHECKPOINT if model == "default" else CHECKPOINT.parent / "de-en-everyday")
    page = open_page(browser, server)
    translate(page, TEXT)
    opened(page, "logits-softmax", {"kind": "decoder", "row": 0})
    assert_full_softmax(page, translator)
    page.close()
