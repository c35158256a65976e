"""Head masks: switched-off heads change outputs only where they should, on every decoding path."""

import pytest
import torch

from generation import generate
from lens.maps import explain
from model.attention import MultiHeadAttention
from model.heads import HeadMask
from tests.test_model import batch_of_sources, random_ids, tiny_model


def test_all_on_mask_is_bit_identical_to_no_mask():
    model = tiny_model(seed=11)
    src, tgt = random_ids(2, 7, 1), random_ids(2, 5, 2)
    mask = HeadMask.all_on(model.config)
    logits, maps = model(src, tgt, return_attention=True)
    masked_logits, masked_maps = model(src, tgt, return_attention=True, head_mask=mask)
    assert torch.equal(logits, masked_logits)
    for kind in ("encoder", "decoder", "cross"):
        assert all(torch.equal(a, b) for a, b in zip(getattr(maps, kind), getattr(masked_maps, kind)))
    for num_beams in (1, 3):
        plain = generate(model, batch_of_sources(), max_new_tokens=12, num_beams=num_beams)
        assert torch.equal(
            plain, generate(model, batch_of_sources(), max_new_tokens=12, num_beams=num_beams, head_mask=mask)
        )


@pytest.mark.parametrize("num_beams", [1, 3])
@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_cached_decoding_honours_the_mask_like_uncached(kind, num_beams):
    model = tiny_model(seed=12)
    mask = HeadMask.all_on(model.config).only(kind, 1, 2).only(kind, 0, 0)
    src = batch_of_sources()
    plain = generate(model, src, max_new_tokens=15, num_beams=num_beams)
    cached = generate(model, src, max_new_tokens=15, num_beams=num_beams, head_mask=mask)
    uncached = generate(model, src, max_new_tokens=15, num_beams=num_beams, head_mask=mask, use_cache=False)
    assert cached.tolist() == uncached.tolist()
    assert cached.tolist() != plain.tolist()  # the mask did something


def test_cached_step_logits_equal_the_masked_teacher_forced_pass():
    from generation.step import CachedDecoder
    from model.attention import padding_mask

    model = tiny_model(seed=13)
    mask = HeadMask.all_on(model.config).switched_off("decoder", 0, 1).switched_off("cross", 1, 3)
    mask = mask.switched_off("encoder", 1, 0)
    src, tgt = random_ids(1, 6, 3), random_ids(1, 5, 4)
    reference = model(src, tgt, head_mask=mask)[0]  # (T, V)
    with torch.inference_mode():
        src_mask = padding_mask(src, model.config.pad_id)
        memory, _ = model.encode(src, src_mask, head_mask=mask)
        decoder = CachedDecoder(model, memory, src_mask, 1, capacity=5, head_mask=mask)
        steps = torch.cat([decoder(tgt[:, : t + 1])[0] for t in range(5)])  # (T, V)
    torch.testing.assert_close(steps, reference, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_a_head_off_in_layer_2_leaves_layer_1_maps_identical(kind):
    model = tiny_model(seed=14)
    src, tgt = random_ids(2, 7, 5), random_ids(2, 6, 6)
    _, maps = model(src, tgt, return_attention=True)
    logits, off = model(
        src, tgt, return_attention=True, head_mask=HeadMask.all_on(model.config).switched_off(kind, 1, 2)
    )
    assert torch.equal(getattr(maps, kind)[0], getattr(off, kind)[0])  # layer 1 sees nothing of layer 2
    if kind == "encoder":  # the memory changes, so every decoder map after it does
        assert not torch.allclose(maps.cross[0], off.cross[0])
    else:
        assert torch.equal(maps.encoder[1], off.encoder[1]) and torch.equal(maps.decoder[0], off.decoder[0])
    assert not torch.allclose(logits, model(src, tgt))


def test_switched_off_head_output_is_zeroed_before_the_output_projection():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4).eval()
    x = torch.randn(2, 5, 32)
    heads = torch.tensor([1.0, 1.0, 0.0, 1.0])
    out, weights = mha(x, need_weights=True, head_mask=heads)
    # Reference: each head's weighted values, head 2 replaced by zeros, concatenated, then W_O.
    _, _, v = mha.project_qkv(x)  # (B, H, L, d_k)
    per_head = weights @ v  # (B, H, L, d_k)
    per_head[:, 2] = 0.0
    expected = mha.out_proj(per_head.transpose(1, 2).reshape(2, 5, 32))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    with torch.no_grad():  # the head's value weights no longer matter at all
        mha.in_proj.weight[64 + 16 : 64 + 24] += 1.0
    torch.testing.assert_close(mha(x, head_mask=heads)[0], out, atol=1e-5, rtol=1e-5)


def test_head_mask_api_and_round_trip():
    config = tiny_model().config
    mask = HeadMask.all_on(config)
    off = mask.switched_off("cross", 1, 3)
    assert off.cross[1, 3] == 0 and off.cross.sum() == off.cross.numel() - 1 and mask.cross.sum() == mask.cross.numel()
    only = mask.only("decoder", 0, 2)
    assert only.decoder[0].tolist() == [0, 0, 1, 0] and only.decoder[1].tolist() == [1, 1, 1, 1]
    d = off.to_dict()
    assert d["cross"][1] == [1, 1, 1, 0] and set(d) == {"encoder", "decoder", "cross"}
    back = HeadMask.from_dict(d, config)
    assert all(torch.equal(getattr(back, k), getattr(off, k)) for k in ("encoder", "decoder", "cross"))


def test_bad_head_masks_get_clear_errors():
    model = tiny_model()
    mask = HeadMask.all_on(model.config)
    with pytest.raises(ValueError, match="kind must be one of"):
        mask.switched_off("self", 0, 0)
    with pytest.raises(ValueError, match="layer must be an integer in"):
        mask.switched_off("encoder", 2, 0)
    with pytest.raises(ValueError, match="head must be an integer in"):
        mask.only("cross", 0, 4)
    with pytest.raises(ValueError, match="exactly the keys"):
        HeadMask.from_dict({"encoder": []}, model.config)
    with pytest.raises(ValueError, match="values 0 or 1"):
        HeadMask.from_dict({**mask.to_dict(), "decoder": [[1, 1, 1, 2], [1, 1, 1, 1]]}, model.config)
    wrong = HeadMask.all_on(tiny_model(n_heads=2).config)
    with pytest.raises(ValueError, match="the model needs"):
        model(random_ids(1, 4, 1), random_ids(1, 3, 2), head_mask=wrong)
    with pytest.raises(TypeError, match="HeadMask"):
        generate(model, random_ids(1, 4, 1), head_mask={"encoder": []})


def test_translator_takes_a_head_mask(tiny_checkpoint):
    from translation import Translator

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    text = "Zwei Hunde spielen im Schnee."
    mask = HeadMask.all_on(translator.config)
    assert translator.translate(text, num_beams=2, max_new_tokens=10, head_mask=mask) == translator.translate(
        text, num_beams=2, max_new_tokens=10
    )
    off = mask.only("cross", 1, 0)
    result = explain(translator, text, num_beams=2, max_new_tokens=10, head_mask=off)
    assert result.translation == translator.translate(text, num_beams=2, max_new_tokens=10, head_mask=off)
    T = len(result.target_tokens)
    assert result.cross.shape[:3] == (2, 4, T)
