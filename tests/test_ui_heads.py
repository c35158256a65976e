"""The head lab: head specs and masks, ablation and attribution payloads against lens/ (tiny model),
then the page in a browser and the /ablate API against app.py serving the shipped checkpoint."""

import json

import numpy as np
import pytest

from lens.ablate import ablate, head_mask_from
from lens.attribute import attribute
from lens.explain import DecodingOptions
from model.heads import HeadMask
from tests.test_ui_page import CHECKPOINT, CHROMIUM, VAL, browser, open_page, server  # noqa: F401  (fixtures)
from ui import head_lab_data as hd
from ui import payload as viz

pytestmark = [pytest.mark.server]
OPTIONS = DecodingOptions(num_beams=2, length_penalty=1.0, max_new_tokens=12)
SENTENCE = "Ein Mann fährt Fahrrad."
needs_page = pytest.mark.skipif(
    not (CHECKPOINT / "model.safetensors").is_file() or not __import__("os").path.exists(CHROMIUM),
    reason="the shipped checkpoint or Debian's chromium is missing",
)


@pytest.fixture(scope="module")
def translator(tiny_checkpoint):
    from translation import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


def test_head_specs_count_from_one_and_refuse_by_name(translator):
    c = translator.config
    mask = head_mask_from(["cross:2:1", "encoder:*:3"], c)
    expected = (
        HeadMask.all_on(c).switched_off("cross", 1, 0).switched_off("encoder", 0, 2).switched_off("encoder", 1, 2)
    )
    assert mask.to_dict() == expected.to_dict()
    assert head_mask_from('["cross:2:1"]', c).to_dict() == head_mask_from("cross:2:1", c).to_dict()
    assert head_mask_from(json.dumps(expected.to_dict()), c).to_dict() == expected.to_dict()
    assert head_mask_from("[]", c).to_dict() == HeadMask.all_on(c).to_dict()
    for bad, message in [
        ("cross:0:1", "cross layer must be 1 to 2"),
        ("cross:1:5", "head must be 1 to 4"),
        ("self:1:1", "kind one of encoder"),
        ("{", "not valid JSON"),
        ({"cross": []}, "exactly the keys"),
        (3, "heads must be a list"),
    ]:
        with pytest.raises(ValueError, match=message):
            head_mask_from(bad, c)


def test_ablation_payload_equals_lens_ablate_and_all_on_changes_nothing(translator):
    mask = head_mask_from(["cross:*:*"], translator.config)
    payload = hd.ablation_payload(translator, SENTENCE, mask, OPTIONS)
    reference = ablate(translator, SENTENCE, mask, **OPTIONS.to_dict())
    assert (payload["original"], payload["ablated"]) == (reference.original, reference.ablated)
    assert payload["diff"] == reference.diff.to_dict()
    assert payload["switched_off"] == [list(h) for h in reference.switched_off]
    sentence = payload["explanation"]["sentences"][0]
    L, H, T, S = reference.explanation.cross.shape
    np.testing.assert_allclose(
        viz.dequantize(sentence["maps"]["cross"], (L, H, T, S)), reference.explanation.cross, atol=1 / 500
    )
    same = hd.ablation_payload(translator, SENTENCE + " Zwei Hunde.", HeadMask.all_on(translator.config), OPTIONS)
    assert same["original"] == same["ablated"] and not same["changed"] and not any(same["diff"]["ablated_changed"])
    assert same["left_out"] == 1 and same["sentence"] == SENTENCE


def test_attribution_payload_agrees_with_lens_attribute(translator):
    payload = hd.attribution_payload(translator, SENTENCE, "integrated_gradients", 8, OPTIONS)
    reference = attribute(translator, SENTENCE, "integrated_gradients", 8, **OPTIONS.to_dict())
    assert payload["translation"] == reference.translation and payload["tokens"]["tgt"] == reference.target_tokens
    np.testing.assert_allclose(payload["agreement"]["per_layer"], reference.agreement_mean_heads, atol=1e-3)
    np.testing.assert_allclose(payload["agreement"]["per_head"], reference.agreement, atol=1e-3)
    T, S = reference.scores.shape
    shares = viz.dequantize(payload["attribution"], (1, 1, T, S))[0, 0]
    has_positive = (reference.scores > 0).any(axis=1)
    np.testing.assert_allclose(shares.sum(axis=1)[has_positive], 1.0, atol=S / 255)
    np.testing.assert_array_equal(shares.argmax(1)[has_positive], reference.scores.argmax(1)[has_positive])
    with pytest.raises(ValueError, match="steps must be a whole number from 1 to 64"):
        hd.attribution_payload(translator, SENTENCE, "integrated_gradients", 1000, OPTIONS)
    with pytest.raises(ValueError, match="method must be one of"):
        hd.attribution_payload(translator, SENTENCE, "saliency", 8, OPTIONS)


def test_attribution_follows_the_heads_switched_off_in_the_grid(translator):
    from lens.attribute import attribute_ids

    mask = head_mask_from(["cross:*:*"], translator.config)  # every cross-attention head off: another model
    payload = hd.attribution_payload(translator, SENTENCE, "integrated_gradients", 8, OPTIONS, mask)
    src_ids, _ = translator.encode_source(SENTENCE)
    off_ids = hd.output_ids(translator, src_ids, OPTIONS, mask)
    assert (
        payload["translation"] == translator.decode(off_ids)
        and len(payload["heads_off"]) == translator.config.n_decoder_layers * translator.config.n_heads
    )
    expected = attribute_ids(translator.model, src_ids, off_ids, "integrated_gradients", 8, mask)
    T, S = expected.scores.shape
    shares = viz.dequantize(payload["attribution"], (1, 1, T, S))[0, 0]
    has_positive = (expected.scores > 0).any(axis=1)
    np.testing.assert_array_equal(shares.argmax(1)[has_positive], expected.scores.argmax(1)[has_positive])
    full = hd.attribution_payload(translator, SENTENCE, "integrated_gradients", 8, OPTIONS)
    assert full["heads_off"] == [] and full["attribution"] != payload["attribution"]


def test_importance_payload_reads_the_json_and_a_missing_file_is_none(translator, tmp_path):
    from lens.importance import ValSlice, head_importance

    c = translator.config
    val = ValSlice([SENTENCE, "Zwei Hunde spielen."], ["A man rides a bike.", "Two dogs play."], [0, 1], "first", None)
    record = json.loads(json.dumps(head_importance(translator, val, attribution="input_x_gradient")))
    (tmp_path / hd.IMPORTANCE_FILE).write_text(json.dumps(record))
    payload = hd.importance_payload(hd.load_importance(str(tmp_path)), c)
    imp = payload["importance"]
    assert imp["metrics"]["cross"]["loss"] == record["kinds"]["cross"]["importance"]
    base = record["baseline"]["val_bleu"]
    assert imp["metrics"]["decoder"]["bleu"][1][2] == pytest.approx(
        base - record["kinds"]["decoder"]["switched_off"]["val_bleu"][1][2], abs=0.01
    )
    assert imp["metrics"]["cross"]["agreement"] == record["kinds"]["cross"]["agreement"]
    values = [row[3] for row in imp["ranked"]]
    assert values == sorted(values, reverse=True) and len(values) == 3 * 2 * c.n_heads
    assert hd.load_importance(str(tmp_path / "nowhere")) is None
    assert hd.importance_payload(None, c) == {
        "layers": {"encoder": 2, "decoder": 2, "cross": 2},
        "heads": 4,
        "importance": None,
    }


# ----- the page and the API, against the shipped checkpoint ---------------------------------------


def lab_answer(page, selector, before):
    page.wait_for_function(
        "([sel, before]) => { const r = document.querySelector(sel);"
        " return r && r.dataset.shown && r.dataset.shown !== before && !r.classList.contains('hl-busy'); }",
        arg=[selector, before],
        timeout=120_000,
    )


@needs_page
def test_switching_heads_off_sends_the_mask_and_shows_what_changed(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    page = open_page(browser, server)
    page.wait_for_selector("#headlab-controls .hl-head")
    page.locator("#headlab-source textarea").fill(VAL[1])
    sent = []
    page.on("request", lambda r: sent.append(r.post_data or "") if "queue/join" in r.url else None)
    head = page.locator(".hl-head[data-kind='cross'][data-layer='1'][data-head='0']")
    head.click()
    expect(head).to_have_attribute("aria-pressed", "false")
    assert page.locator(".hl-controls").get_attribute("data-off") == "cross:2:1"
    page.locator("#headlab-apply").click()
    lab_answer(page, ".hl-result", "")
    mask = [json.loads(d) for d in sent if "cross" in d][-1]["data"][1]
    assert json.loads(mask)["cross"][1] == [0, 1, 1, 1] and json.loads(mask)["encoder"][0] == [1, 1, 1, 1]
    result = page.locator(".hl-result")
    assert result.get_attribute("data-off") == "cross:2:1"
    if result.get_attribute("data-changed") == "true":
        assert page.locator(".hl-result mark").count() > 0
    else:  # no change is said, and nothing is marked
        expect(page.locator(".hl-result .hl-message")).to_contain_text("No change")
        assert page.locator(".hl-result mark").count() == 0
    before = result.get_attribute("data-shown")
    page.locator(".hl-all-cross").click()
    page.locator("#headlab-apply").click()
    lab_answer(page, ".hl-result", before)
    assert result.get_attribute("data-changed") == "true" and page.locator(".hl-result mark.hl-new").count() > 0
    assert page.locator(".hl-result .al-canvas").is_visible()  # the ablated model's maps, in the viewer
    page.close()


@needs_page
def test_attribution_appears_beside_attention(browser, server):  # noqa: F811
    page = open_page(browser, server)
    page.wait_for_selector("#headlab-controls .hl-head")
    page.locator("#headlab-method").get_by_text("input × gradient").click()
    page.locator("#headlab-attribute").click()
    lab_answer(page, ".hl-attribution", "")
    widths = page.evaluate("() => Array.from(document.querySelectorAll('.hl-canvas'), (c) => c.width)")
    assert len(widths) == 2 and min(widths) > 0
    assert 0 <= float(page.locator(".hl-attribution").get_attribute("data-agreement")) <= 1
    assert "Agreement" in page.locator(".hl-agreement").inner_text()
    page.close()


@needs_page
def test_with_every_cross_head_off_attribution_says_the_english_no_longer_depends_on_the_german(browser, server):  # noqa: F811
    page = open_page(browser, server)
    page.wait_for_selector("#headlab-controls .hl-head")
    page.locator(".hl-all-cross").click()
    page.locator("#headlab-method").get_by_text("input × gradient").click()
    page.locator("#headlab-attribute").click()
    lab_answer(page, ".hl-attribution", "")
    assert "no longer depends" in page.inner_text(".hl-attribution .hl-message")
    assert page.locator(".hl-attribution .hl-pair").is_hidden()  # no empty map drawn
    page.close()


@needs_page
def test_ablate_api_switching_off_every_cross_head_changes_the_translation(server):  # noqa: F811
    from gradio_client import Client

    client = Client(server, verbose=False)
    result = client.predict(VAL[1], ["cross:*:*"], "greedy", 1, 1.0, 64, api_name="/ablate")
    assert result["ablated"] != result["original"] and any(result["diff"]["ablated_changed"])
    assert sorted(result["switched_off"]) == [["cross", layer, head] for layer in range(3) for head in range(4)]
    same = client.predict(VAL[1], "[]", "greedy", 1, 1.0, 64, api_name="/ablate")
    assert same["ablated"] == same["original"] == result["original"]
    with pytest.raises(Exception, match="cross head must be 1 to 4"):
        client.predict(VAL[1], ["cross:1:9"], api_name="/ablate")
