"""model/taps.py: the forward pass offers every named intermediate, a tap may replace one, and no tap changes nothing."""

import re
import threading

import pytest
import torch

from lens.stream import attention_blocks, encoder_levels, read, replacing, stages
from model import taps
from tests.test_model import PAD, batch_of_sources, random_ids, tiny_model

TGT = random_ids(4, 5, 7)
TGT[2, 3:] = PAD


def documented_names(config) -> set[str]:
    """The names model/taps.py's docstring promises, spelled out for this config."""
    names = {
        "encoder.tokens",
        "encoder.embed",
        "encoder.out",
        "decoder.tokens",
        "decoder.embed",
        "decoder.out",
        "logits",
    }
    parts = ("q", "k", "v", "scores", "weights", "heads", "out", "resid")
    for stack, layers, attentions in (
        ("encoder", config.n_encoder_layers, ("self_attn",)),
        ("decoder", config.n_decoder_layers, ("self_attn", "cross_attn")),
    ):
        for i in range(layers):
            names |= {f"{stack}.{i}.{a}.{p}" for a in attentions for p in parts}
            names |= {f"{stack}.{i}.ff.{p}" for p in ("hidden", "out", "resid")}
    return names


@torch.inference_mode()
def test_every_documented_name_is_offered_once_in_order_with_its_shape():
    model = tiny_model(seed=1)
    src, c = batch_of_sources(), model.config
    offered = []
    model(src, TGT, return_attention=True, tap=lambda name, value: offered.append((name, tuple(value.shape))))
    names = [name for name, _ in offered]
    assert len(names) == len(set(names)) and set(names) == documented_names(c)
    shapes = dict(offered)
    B, S, T, H = src.size(0), src.size(1), TGT.size(1), c.n_heads
    assert shapes["encoder.0.self_attn.weights"] == (B, H, S, S)
    assert shapes["decoder.1.cross_attn.k"] == (B, H, S, c.d_k)
    assert shapes["decoder.0.ff.hidden"] == (B, T, c.d_ff)
    assert shapes["logits"] == (B, T, c.vocab_size)
    assert names.index("encoder.out") < names.index("decoder.embed") < names.index("logits")
    documented = re.findall(r"^\s+(\S+)\s+\(", taps.__doc__, flags=re.M)
    assert "encoder.{i}.self_attn.q" in documented and "logits" in documented


@torch.inference_mode()
def test_a_tap_that_reads_changes_nothing_and_the_fused_path_offers_no_weights():
    model = tiny_model(seed=2)
    src = batch_of_sources()
    plain = model(src, TGT)
    seen = []
    assert torch.equal(model(src, TGT, tap=lambda name, value: seen.append(name)), plain)
    assert "encoder.0.self_attn.q" in seen and not any(n.endswith((".scores", ".weights")) for n in seen)


@torch.inference_mode()
def test_a_replaced_value_takes_its_place_from_there_on():
    model = tiny_model(seed=3)
    src = batch_of_sources()
    plain = model(src, TGT)
    zeroed = model(src, TGT, tap=replacing({"decoder.1.cross_attn.heads": torch.zeros_like}))
    assert not torch.allclose(zeroed, plain)
    # zeroing every head of the last cross-attention is switching them all off by the head mask
    from model.heads import HeadMask

    mask = HeadMask.all_on(model.config)
    mask.cross[1] = 0.0
    torch.testing.assert_close(zeroed, model(src, TGT, head_mask=mask))
    with pytest.raises(ValueError, match="'encoder.embed', which is"):
        model(src, TGT, tap=lambda name, value: torch.zeros(3) if name == "encoder.embed" else None)


def test_two_calls_with_different_taps_at_once_each_see_their_own():
    model = tiny_model(seed=4)
    src = batch_of_sources()
    found = {}

    def run(key, scale):
        values = []
        with torch.inference_mode():
            for _ in range(20):
                model(src, TGT, tap=lambda n, v: values.append(float(v.abs().sum())) if n == "encoder.embed" else None)
                model(src * 0 + scale, TGT)
        found[key] = set(values)

    threads = [threading.Thread(target=run, args=(k, k + 3)) for k in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(found[0]) == len(found[1]) == 1 and found[0] == found[1]  # only its own calls, always the same


@torch.inference_mode()
def test_the_stream_reads_the_stages_and_levels_the_model_computes():
    model = tiny_model(seed=5)
    src = batch_of_sources()[:1]
    labelled = stages(model.config, "decoder")
    assert [label for label, _ in labelled][:4] == [
        "embedding",
        "layer 1 self-attention",
        "layer 1 cross-attention",
        "layer 1 feed-forward",
    ]
    seen, logits = read(model, src, TGT[:1], [name for _, name in labelled])
    hidden, _, _ = model.decode(TGT[:1], model.encode(src)[0], None)
    torch.testing.assert_close(model.decoder_norm(seen[labelled[-1][1]]), hidden)
    torch.testing.assert_close(logits, model(src, TGT[:1]))
    levels = encoder_levels(model.config)
    assert len(levels) == model.config.n_encoder_layers + 1
    blocks = attention_blocks(model.config, "decoder")
    assert [b.kind for b in blocks] == ["decoder", "cross"] * model.config.n_decoder_layers
    assert blocks[2].before == "decoder.0.ff.resid"
