"""Properties of the hand-written Transformer, on tiny configs."""

import json

import pytest
import torch
from torch import nn

from generation import generate
from model import CheckpointError, ConfigError, Transformer, TransformerConfig
from model.attention import (
    MultiHeadAttention,
    padding_mask,
    scaled_dot_product_attention,
)
from model.layers import DecoderLayer, EncoderLayer

PAD = 0


def tiny_config(**overrides) -> TransformerConfig:
    values = dict(
        vocab_size=40, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=64
    )
    values.update(overrides)
    return TransformerConfig(**values)


def tiny_model(seed: int = 0, **overrides) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(tiny_config(**overrides)).eval()


def random_ids(batch: int, length: int, seed: int, vocab: int = 40) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab, (batch, length), generator=gen)


def test_shapes_of_logits_and_every_attention_map():
    model = tiny_model(n_encoder_layers=3, n_decoder_layers=2)
    src, tgt = random_ids(2, 7, 1), random_ids(2, 5, 2)
    logits, attn = model(src, tgt, return_attention=True)
    assert logits.shape == (2, 5, 40)
    assert len(attn.encoder) == 3 and len(attn.decoder) == 2 and len(attn.cross) == 2
    assert all(a.shape == (2, 4, 7, 7) for a in attn.encoder)
    assert all(a.shape == (2, 4, 5, 5) for a in attn.decoder)
    assert all(a.shape == (2, 4, 5, 7) for a in attn.cross)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_cannot_see_the_future(norm_first):
    model = tiny_model(norm_first=norm_first)
    src, tgt = random_ids(2, 6, 3), random_ids(2, 8, 4)
    changed = tgt.clone()
    changed[:, 5:] = random_ids(2, 3, 5)
    before, after = model(src, tgt), model(src, changed)
    torch.testing.assert_close(before[:, :5], after[:, :5], atol=1e-6, rtol=0)
    assert not torch.allclose(before[:, 5:], after[:, 5:])


def test_padding_changes_nothing_at_real_positions():
    model = tiny_model()
    src, tgt = random_ids(2, 6, 6), random_ids(2, 5, 7)
    reference = model(src, tgt)
    padded_src = torch.cat([src, torch.full((2, 4), PAD)], dim=1)
    padded_tgt = torch.cat([tgt, torch.full((2, 3), PAD)], dim=1)
    torch.testing.assert_close(model(padded_src, tgt), reference, atol=1e-5, rtol=0)
    torch.testing.assert_close(model(src, padded_tgt)[:, :5], reference, atol=1e-5, rtol=0)


def test_attention_rows_sum_to_one_and_respect_masks():
    model = tiny_model()
    src = random_ids(2, 6, 8)
    src[1, 4:] = PAD  # the second sentence has 4 real tokens
    tgt = random_ids(2, 5, 9)
    _, attn = model(src, tgt, return_attention=True)
    for maps in (attn.encoder, attn.decoder, attn.cross):
        for a in maps:
            torch.testing.assert_close(a.sum(-1), torch.ones_like(a.sum(-1)))
    upper = torch.ones(5, 5, dtype=torch.bool).triu(1)
    for a in attn.decoder:
        assert a[..., upper].abs().max() == 0
    for a in attn.cross + attn.encoder:
        assert a[1, :, :, 4:].abs().max() == 0
        assert a[1, :, :, :4].min() > 0


def test_fully_masked_row_is_zero_not_nan_on_both_paths():
    q, k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)
    mask = torch.ones(1, 1, 3, 5, dtype=torch.bool)
    mask[..., 1, :] = False
    fast, _ = scaled_dot_product_attention(q, k, v, mask)
    slow, weights = scaled_dot_product_attention(q, k, v, mask, need_weights=True)
    assert not torch.isnan(fast).any() and not torch.isnan(slow).any()
    assert weights[..., 1, :].abs().max() == 0 and slow[..., 1, :].abs().max() == 0
    torch.testing.assert_close(fast, slow)


def test_multi_head_attention_matches_torch_reference():
    torch.manual_seed(0)
    ours = MultiHeadAttention(32, 4).eval()
    ref = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(ours.in_proj.weight)
        ref.in_proj_bias.copy_(ours.in_proj.bias)
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    x = torch.randn(2, 6, 32)
    ids = random_ids(2, 6, 10)
    ids[0, 4:] = PAD
    out, weights = ours(x, mask=padding_mask(ids, PAD), need_weights=True)
    ref_out, ref_weights = ref(x, x, x, key_padding_mask=ids == PAD, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights, ref_weights, atol=1e-6, rtol=1e-5)

    cross = MultiHeadAttention(32, 4, cross=True).eval()
    cross.load_state_dict(ours.state_dict())
    memory = torch.randn(2, 9, 32)
    out, _ = cross(x, memory)
    ref_out, _ = ref(x, memory, memory)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=1e-5)


def _copy_attention(ours: MultiHeadAttention, ref: nn.MultiheadAttention) -> None:
    ref.in_proj_weight.copy_(ours.in_proj.weight)
    ref.in_proj_bias.copy_(ours.in_proj.bias)
    ref.out_proj.weight.copy_(ours.out_proj.weight)
    ref.out_proj.bias.copy_(ours.out_proj.bias)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_and_decoder_layers_match_torch_reference(norm_first):
    torch.manual_seed(1)
    enc = EncoderLayer(32, 4, 64, 0.0, norm_first).eval()
    ref_enc = nn.TransformerEncoderLayer(32, 4, 64, 0.0, batch_first=True, norm_first=norm_first).eval()
    dec = DecoderLayer(32, 4, 64, 0.0, norm_first).eval()
    ref_dec = nn.TransformerDecoderLayer(32, 4, 64, 0.0, batch_first=True, norm_first=norm_first).eval()
    with torch.no_grad():
        for layer, ref in ((enc, ref_enc), (dec, ref_dec)):
            for norm in ("norm1", "norm2", "norm3"):
                if hasattr(layer, norm):
                    torch.nn.init.normal_(getattr(layer, norm).weight)  # not the identity: a real check
                    getattr(ref, norm).load_state_dict(getattr(layer, norm).state_dict())
            _copy_attention(layer.self_attn, ref.self_attn)
            ref.linear1.load_state_dict(layer.ff.linear1.state_dict())
            ref.linear2.load_state_dict(layer.ff.linear2.state_dict())
        _copy_attention(dec.cross_attn, ref_dec.multihead_attn)

    x, y = torch.randn(2, 6, 32), torch.randn(2, 5, 32)
    out, _ = enc(x, None)
    torch.testing.assert_close(out, ref_enc(x), atol=1e-5, rtol=1e-5)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    out, _, _ = dec(y, x, None, causal[None, None])
    torch.testing.assert_close(out, ref_dec(y, x, tgt_mask=~causal), atol=1e-5, rtol=1e-5)


def test_fast_path_and_weights_path_give_the_same_logits():
    model = tiny_model()
    src, tgt = random_ids(3, 7, 11), random_ids(3, 6, 12)
    src[2, 3:] = PAD
    fast = model(src, tgt)
    slow, _ = model(src, tgt, return_attention=True)
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-5)


def batch_of_sources() -> torch.Tensor:
    src = random_ids(4, 9, 13)
    src[1, 5:] = PAD
    src[3, 2:] = PAD
    return src


@pytest.mark.parametrize("num_beams", [1, 3])
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_and_uncached_decoding_give_the_same_tokens(num_beams, norm_first):
    model = tiny_model(seed=3, norm_first=norm_first)
    src = batch_of_sources()
    cached = generate(model, src, max_new_tokens=20, num_beams=num_beams)
    uncached = generate(model, src, max_new_tokens=20, num_beams=num_beams, use_cache=False)
    assert cached.tolist() == uncached.tolist()
    assert cached.shape[1] > 1


@pytest.mark.parametrize("num_beams", [1, 4])
def test_batch_decodes_like_each_sentence_alone(num_beams):
    model = tiny_model(seed=4)
    src = batch_of_sources()
    together = generate(model, src, max_new_tokens=15, num_beams=num_beams)
    for row in range(src.size(0)):
        alone_src = src[row : row + 1, : int((src[row] != PAD).sum())]
        alone = generate(model, alone_src, max_new_tokens=15, num_beams=num_beams)[0].tolist()
        assert [t for t in together[row].tolist() if t != PAD] == [t for t in alone if t != PAD]


def test_min_new_tokens_and_generation_ignores_dropout():
    model = tiny_model(seed=8, dropout=0.3)
    src = batch_of_sources()
    eval_tokens = generate(model, src, max_new_tokens=10, min_new_tokens=10)
    model.train()
    assert torch.equal(generate(model, src, max_new_tokens=10, min_new_tokens=10), eval_tokens)
    assert model.training  # left as it was
    assert eval_tokens.shape == (4, 10) and not (eval_tokens == model.config.eos_id).any()


def test_beam_size_one_equals_greedy():
    from generation.search import SearchOptions, beam_search, greedy_search

    model = tiny_model(seed=5)
    src = batch_of_sources()
    greedy = greedy_search(model, src, SearchOptions(max_new_tokens=20))
    beam = beam_search(model, src, 1, 1.0, SearchOptions(max_new_tokens=20))
    assert greedy.tolist() == beam.tolist()


def test_generate_output_format_and_beam_scores_are_better():
    model = tiny_model(seed=6)
    config = model.config
    src = batch_of_sources()
    out = generate(model, src, max_new_tokens=12, num_beams=4, length_penalty=0.0)
    assert out.dtype == torch.long and out.size(0) == 4
    for row in out.tolist():
        tokens = [t for t in row if t != PAD]
        assert config.bos_id not in tokens
        if config.eos_id in tokens:  # EOS ends the sequence, padding follows
            assert tokens.index(config.eos_id) == len(tokens) - 1
            assert row[: len(tokens)] == tokens

    def total_log_prob(sentence_src, ids):
        tgt_in = torch.tensor([[config.bos_id] + ids[:-1]])
        log_probs = model(sentence_src, tgt_in).log_softmax(-1)[0]
        return sum(log_probs[i, t].item() for i, t in enumerate(ids))

    greedy = generate(model, src, max_new_tokens=12)
    for row in range(4):
        s = src[row : row + 1]
        beam_ids = [t for t in out[row].tolist() if t != PAD]
        greedy_ids = [t for t in greedy[row].tolist() if t != PAD]
        if beam_ids[-1] == config.eos_id and greedy_ids[-1] == config.eos_id:
            # with no length penalty, beam search maximises the sum: never below greedy
            assert total_log_prob(s, beam_ids) >= total_log_prob(s, greedy_ids) - 1e-4


def test_save_and_load_round_trip(tmp_path):
    model = tiny_model(seed=7, norm_first=True)
    model.save_pretrained(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} >= {"config.json", "model.safetensors", "README.md"}
    loaded = Transformer.from_pretrained(tmp_path)
    assert loaded.config == model.config
    assert loaded.lm_head.weight is loaded.embed.weight  # the tie survives
    src, tgt = random_ids(2, 6, 14), random_ids(2, 4, 15)
    assert torch.equal(model(src, tgt), loaded(src, tgt))
    assert json.loads((tmp_path / "config.json").read_text()) == model.config.to_dict()


def test_corrupt_or_truncated_weights_give_a_clear_error(tmp_path):
    model = tiny_model()
    model.save_pretrained(tmp_path)
    weights = tmp_path / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        Transformer.from_pretrained(tmp_path)
    weights.write_bytes(b"not a safetensors file at all")
    with pytest.raises(CheckpointError, match="model.safetensors"):
        Transformer.from_pretrained(tmp_path)
    weights.unlink()
    with pytest.raises(CheckpointError, match="model.safetensors is missing"):
        Transformer.from_pretrained(tmp_path)


def test_weights_of_another_size_give_a_clear_error(tmp_path):
    tiny_model().save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["d_ff"] = 128
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="do not fit"):
        Transformer.from_pretrained(tmp_path)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"n_heads": 5}, "divisible"),
        ({"dropout": 1.5}, "dropout"),
        ({"eos_id": 0}, "distinct"),
        ({"bos_id": 40}, "bos_id"),
        ({"n_heads": True}, "n_heads"),
        ({"surprise": 1}, "unknown config key.*surprise"),
    ],
)
def test_bad_config_json_names_the_problem(tmp_path, change, message):
    tiny_model().save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config.update(change)
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match=message):
        Transformer.from_pretrained(tmp_path)


def test_missing_config_key_and_broken_json(tmp_path):
    tiny_model().save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    del config["d_ff"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="missing config key.*d_ff"):
        Transformer.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="config.json is not valid JSON"):
        Transformer.from_pretrained(tmp_path)


def test_positional_encoding_is_not_saved():
    model = tiny_model()
    assert not any("pe" == name.split(".")[-1] for name in model.state_dict())
    assert not any("pos" in name for name, _ in model.named_parameters())


def test_paper_base_configuration_has_about_63_million_parameters():
    config = TransformerConfig(
        vocab_size=37000, d_model=512, n_heads=8, n_encoder_layers=6, n_decoder_layers=6, d_ff=2048, dropout=0.1
    )
    with torch.device("meta"):
        model = Transformer(config)
    count = sum(p.numel() for p in model.parameters())  # shared embedding counted once
    print(f"paper base configuration: {count:,} parameters")
    assert 62_500_000 < count < 63_500_000
