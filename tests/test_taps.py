"""model/taps.py: the forward pass offers every named intermediate (model/tap_names.py lists them), a tap may replace
one, and no tap changes nothing."""

import re
import threading

import pytest
import torch

from lens.stream import attention_blocks, encoder_levels, read, replacing, stages
from model import taps
from model.tap_names import tap_names
from tests.test_model import PAD, batch_of_sources, random_ids, tiny_config, tiny_model

TGT = random_ids(4, 5, 7)
TGT[2, 3:] = PAD


def general(name: str) -> str:
    """A tap name with its layer written {i}, as model/taps.py's docstring writes it: "encoder.{i}.ff.out"."""
    return re.sub(r"\.\d+\.", ".{i}.", name)


@torch.inference_mode()
def test_every_tap_name_is_offered_once_in_order_with_its_shape():
    model = tiny_model(seed=1)
    src, c = batch_of_sources(), model.config
    offered = []
    model(src, TGT, return_attention=True, tap=lambda name, value: offered.append((name, tuple(value.shape))))
    names = [name for name, _ in offered]
    assert names == tap_names(c) and len(names) == len(set(names))
    shapes = dict(offered)
    B, S, T, H = src.size(0), src.size(1), TGT.size(1), c.n_heads
    assert shapes["encoder.0.self_attn.weights"] == (B, H, S, S)
    assert shapes["decoder.1.cross_attn.k"] == (B, H, S, c.d_k)
    assert shapes["decoder.0.ff.hidden"] == (B, T, c.d_ff)
    assert shapes["logits"] == (B, T, c.vocab_size)
    assert names.index("encoder.out") < names.index("decoder.embed") < names.index("logits")


@torch.inference_mode()
def test_tap_names_are_what_a_real_pass_offers_for_any_layer_counts():
    """tap_names runs on the meta device; a real pass of another config offers the same names, and the fused
    path the same less the maps' scores and weights."""
    model = tiny_model(seed=6, n_encoder_layers=1, n_decoder_layers=3, norm_first=True)
    src, names = batch_of_sources(), tap_names(model.config)
    for maps in (True, False):
        seen = []
        model(src, TGT, return_attention=maps, tap=lambda name, value: seen.append(name))
        assert seen == [n for n in names if maps or not n.endswith((".scores", ".weights"))]
    assert {n.split(".")[1] for n in names if n.startswith("decoder.") and n.count(".") > 1} == {"0", "1", "2"}
    assert {n.split(".")[1] for n in names if n.startswith("encoder.") and n.count(".") > 1} == {"0"}


def test_the_docstring_lists_every_tap_name_and_no_other():
    """model/taps.py's table has a line for each encoder and top-level name (layers written {i}); the decoder's
    are "as above": their family is named and the encoder's counterpart has its line."""
    documented = set(re.findall(r"^\s+(\S+)\s+\(", taps.__doc__, flags=re.M))
    offered = {general(name) for name in tap_names(tiny_config())}
    assert documented <= offered, documented - offered
    for name in sorted(offered - documented):
        assert name.startswith("decoder."), f"{name} has no line in model/taps.py's docstring"
        family = name.rsplit(".", 1)[0] + ".*" if "{i}" in name else name
        assert family in taps.__doc__, f"{family} is not named in model/taps.py's docstring"
        as_above = name.replace("decoder.", "encoder.", 1).replace(".cross_attn.", ".self_attn.")
        assert as_above in documented, f"{name}: {as_above} has no line in model/taps.py's docstring"


def test_lens_reads_only_names_the_model_offers():
    config = tiny_config(n_encoder_layers=3, n_decoder_layers=2)
    names = set(tap_names(config))
    assert {name for _, name in encoder_levels(config)} <= names
    for stack in ("encoder", "decoder"):
        assert {name for _, name in stages(config, stack)} <= names
        for block in attention_blocks(config, stack):
            assert {block.before, block.after, block.then_ff or block.after} <= names


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
