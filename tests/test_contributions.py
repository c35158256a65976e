"""lens/contributions.py (ALTI+): the decomposed pass is the model, each block's parts add up to its output,
shares sum to 1, the future and switched-off cross-attention give nothing, and a trained model's nouns come
from their German nouns."""

from pathlib import Path

import pytest
import torch

from lens.contributions import contributions, decoder_rollout, parts_of_block, shares_of
from lens.explain import DecodingOptions, decode_one
from model.attention import padding_mask, target_mask
from model.heads import HeadMask
from translation import Translator

SENTENCE = "Ein Mann fährt mit seinem Fahrrad."
OPTIONS = DecodingOptions(num_beams=1, max_new_tokens=8)
SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / "de-en"


@pytest.fixture(scope="module")
def translator(both_norms):
    return both_norms


def tensors(translator):
    d = decode_one(translator, SENTENCE, OPTIONS)
    return torch.tensor([d.source_ids]), torch.tensor([d.input_ids])


@torch.inference_mode()
def test_the_decomposed_pass_gives_the_models_own_logits(translator):
    src, tgt = tensors(translator)
    torch.testing.assert_close(
        decoder_rollout(translator.model, src, tgt)[0], translator.model(src, tgt)[0], atol=1e-4, rtol=1e-4
    )


@torch.inference_mode()
@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_each_blocks_parts_add_up_to_its_output_and_its_output_is_the_layers(translator, kind):
    model, (src, tgt) = translator.model, tensors(translator)
    memory, _ = model.encode(src)
    x = model.embed_tokens(src if kind == "encoder" else tgt)[0]
    layer = (model.encoder_layers if kind == "encoder" else model.decoder_layers)[0]
    attention, norm = (layer.cross_attn, layer.norm2) if kind == "cross" else (layer.self_attn, layer.norm1)
    mask = target_mask(tgt, model.config.pad_id) if kind == "decoder" else padding_mask(src, model.config.pad_id)
    keys = memory if kind == "cross" else None
    output, _, parts = parts_of_block(
        attention, norm, x, None if keys is None else keys[0], mask, model.config.norm_first
    )
    expected, _ = layer.sublayer(x[None], norm, lambda h: attention(h, keys, mask=mask))
    torch.testing.assert_close(output, expected[0], atol=1e-5, rtol=1e-5)
    bias = attention.out_proj.bias
    if model.config.norm_first:  # Pre-LN: the parts and W_O's bias make x + attention(norm(x))
        rebuilt = parts.sum(1) + bias
    else:  # Post-LN, LayerNorm linearized at its input: the parts, W_O's bias through the same map, and beta
        before = x + attention(x[None], keys, mask=mask)[0][0]
        scale = torch.rsqrt(before.var(-1, unbiased=False, keepdim=True) + norm.eps)
        rebuilt = parts.sum(1) + (bias - bias.mean()) * scale * norm.weight + norm.bias
    torch.testing.assert_close(rebuilt, output, atol=1e-4, rtol=1e-4)


def test_every_tokens_shares_sum_to_one_and_later_english_gives_nothing(translator):
    c = contributions(translator, SENTENCE, OPTIONS)
    assert len(c.source) == len(c.target) == len(c.target_tokens) and len(c.source[0]) == len(c.source_tokens)
    for step, (source, target) in enumerate(zip(c.source, c.target)):
        assert sum(source) + sum(target) == pytest.approx(1.0, abs=1e-3)
        assert min(source + target) >= 0.0
        assert all(share == 0.0 for share in target[step + 1 :])  # the decoder never sees the future
        assert sum(source) == pytest.approx(c.source_share[step], abs=1e-3)
    assert all(sum(row) == pytest.approx(1.0, abs=1e-3) for row in c.encoder)
    assert c.source_share_by_layer[-1] == pytest.approx(c.source_share, abs=1e-3)
    assert 0.0 <= c.agreement <= 1.0 and 0.0 <= c.same_top <= 1.0


def test_the_source_share_is_exactly_zero_with_every_cross_attention_head_off(translator):
    mask = HeadMask.all_on(translator.config)
    mask.cross[:] = 0.0
    c = contributions(translator, SENTENCE, OPTIONS, head_mask=mask)
    assert all(share == 0.0 for row in c.source for share in row)
    assert all(sum(row) == pytest.approx(1.0, abs=1e-3) for row in c.target)
    one_off = contributions(
        translator, SENTENCE, OPTIONS, head_mask=HeadMask.all_on(translator.config).switched_off("cross", 0, 0)
    )
    assert sum(one_off.source_share) > 0.0


def test_shares_follow_the_distance_rule():
    output = torch.tensor([[1.0, 0.0]])
    parts = torch.tensor([[[1.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [0.5, 0.0]]])  # the output itself, nothing, away, half
    shares = shares_of(parts, output)[0]
    torch.testing.assert_close(shares, torch.tensor([1.0, 0.0, 0.0, 0.5]) / 1.5)


@pytest.mark.skipif(not (SHIPPED / "model.safetensors").exists(), reason="the shipped checkpoint is not here")
def test_on_the_shipped_model_hat_comes_most_from_hut_and_bike_from_fahrrad():
    translator = Translator.from_pretrained(SHIPPED, device="cpu")
    c = contributions(translator, "Ein Mann mit einem roten Hut fährt Fahrrad.", DecodingOptions())
    for english, german in (("▁hat", "▁Hut"), ("▁man", "▁Mann")):
        step = c.target_tokens.index(english)
        assert max(range(len(c.source_tokens)), key=lambda s: c.source[step][s]) == c.source_tokens.index(german)
    assert all(0.3 < share < 1.0 for share in c.source_share[:-1])  # content from the German, never all of it
