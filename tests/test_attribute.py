"""Attribution: integrated gradients are complete, input x gradient is x . dF/dx, rollout rows are
distributions, agreement counts what it says."""

import json

import numpy as np
import pytest
import torch

from lens.attribute import (
    agreement,
    attention_rollout,
    attribute,
    attribute_ids,
    special_token_masks,
)
from model import Transformer, TransformerConfig

SRC = [5, 9, 14, 7, 22, 2]  # ends in EOS
TGT = [11, 4, 30, 8, 2]  # the outputs, ending in EOS


def tiny_model(dtype=torch.float32, seed=0) -> Transformer:
    torch.manual_seed(seed)
    config = TransformerConfig(
        vocab_size=40, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=32
    )
    return Transformer(config).to(dtype).eval()


def logprobs_with_source_embedding(model, embedding: torch.Tensor) -> torch.Tensor:
    """Reference F: log p of each target token with the source embedding (S, D) swapped in."""
    src = torch.tensor([SRC])
    handle = model.embed.register_forward_hook(lambda m, i, o: embedding[None] if i[0] is src else None)
    try:
        logits = model(src, torch.tensor([[model.config.bos_id] + TGT[:-1]]))[0]  # (T, V)
    finally:
        handle.remove()
    return logits.log_softmax(-1)[torch.arange(len(TGT)), torch.tensor(TGT)]  # (T,)


@pytest.mark.parametrize("steps, tolerance", [(64, 5e-3), (256, 1.5e-3)])
def test_integrated_gradients_are_complete(steps, tolerance):
    """Attributions sum to F(x) - F(baseline) for every target token, within `tolerance` nats (F
    differences here reach 0.56). ReLU kinks make the path gradient jump, so the midpoint rule
    converges like 1/steps, not 1/steps^2."""
    model = tiny_model()
    result = attribute_ids(model, SRC, TGT, "integrated_gradients", steps=steps)
    x = model.embed(torch.tensor(SRC)).detach()
    with torch.no_grad():
        f_input = logprobs_with_source_embedding(model, x).numpy()
        f_baseline = logprobs_with_source_embedding(model, torch.zeros_like(x)).numpy()
    np.testing.assert_allclose(result.target_logprobs, f_input, atol=1e-5)
    np.testing.assert_allclose(result.baseline_logprobs, f_baseline, atol=1e-5)
    difference = f_input - f_baseline
    assert np.abs(difference).max() > 10 * tolerance  # the test has something to be complete about
    np.testing.assert_allclose(result.scores.sum(axis=1), difference, atol=tolerance)
    np.testing.assert_allclose(result.completeness_gap, result.scores.sum(axis=1) - difference, atol=1e-5)


def test_completeness_gap_shrinks_with_more_steps():
    model = tiny_model(seed=1)
    coarse = attribute_ids(model, SRC, TGT, steps=4).completeness_gap
    fine = attribute_ids(model, SRC, TGT, steps=128).completeness_gap
    assert np.abs(fine).max() < np.abs(coarse).max() / 10


def test_input_x_gradient_is_x_dot_gradient():
    """Against central finite differences in float64: d/de F(x with token s scaled by 1+e) = x_s . dF/dx_s."""
    model = tiny_model(torch.float64)
    result = attribute_ids(model, SRC, TGT, "input_x_gradient")
    x = model.embed(torch.tensor(SRC)).detach()
    eps = 1e-6
    expected = np.zeros((len(TGT), len(SRC)))
    with torch.no_grad():
        for s in range(len(SRC)):
            up, down = x.clone(), x.clone()
            up[s] *= 1 + eps
            down[s] *= 1 - eps
            diff = logprobs_with_source_embedding(model, up) - logprobs_with_source_embedding(model, down)
            expected[:, s] = (diff / (2 * eps)).numpy()
    np.testing.assert_allclose(result.scores, expected, rtol=1e-4, atol=1e-7)
    assert not model.embed._forward_hooks and not model.lm_head._forward_hooks  # hooks removed


def test_target_groups_give_the_same_gradients():
    """Running targets over shorter decoder prefixes (causal) changes nothing."""
    model = tiny_model()
    one_pass = attribute_ids(model, SRC, TGT, steps=8, group=len(TGT))
    grouped = attribute_ids(model, SRC, TGT, steps=8, group=2)
    np.testing.assert_allclose(grouped.scores, one_pass.scores, atol=1e-5)
    np.testing.assert_allclose(grouped.target_logprobs, one_pass.target_logprobs, atol=1e-5)


def test_path_points_in_chunks_give_the_same_scores():
    """Bounded memory (a few path points a pass, gradients reduced at once) changes nothing."""
    model = tiny_model()
    whole = attribute_ids(model, SRC, TGT, steps=12, rows=12)
    chunked = attribute_ids(model, SRC, TGT, steps=12, rows=5)
    np.testing.assert_allclose(chunked.scores, whole.scores, atol=1e-5)


def test_concurrent_attributions_and_model_calls_do_not_meet():
    """No hooks on the shared model: translations running beside an attribution leave it exact (they used to
    swap its tensors: 'One of the differentiated Tensors does not require grad')."""
    import threading

    model = tiny_model()
    alone = attribute_ids(model, SRC, TGT, steps=4, group=1)
    stop, errors = threading.Event(), []

    def translate_meanwhile():
        src, tgt = torch.tensor([SRC[:-1] + [2]]), torch.tensor([[1] + TGT[:3]])
        while not stop.is_set():
            with torch.inference_mode():
                model(src, tgt)

    def attribute_meanwhile(results):
        try:
            for _ in range(10):
                results.append(attribute_ids(model, SRC, TGT, steps=4, group=1).scores)
        except Exception as err:  # collected: a failure in a thread must fail the test
            errors.append(err)

    others = [threading.Thread(target=translate_meanwhile) for _ in range(3)]
    results: list = []
    attributions = [threading.Thread(target=attribute_meanwhile, args=(results,)) for _ in range(3)]
    for thread in others + attributions:
        thread.start()
    for thread in attributions:
        thread.join()
    stop.set()
    for thread in others:
        thread.join()
    assert errors == [] and len(results) == 30
    for scores in results:
        np.testing.assert_allclose(scores, alone.scores, atol=1e-5)


def test_attribute_ids_rejects_bad_arguments():
    model = tiny_model()
    with pytest.raises(ValueError, match="method"):
        attribute_ids(model, SRC, TGT, method="saliency")
    with pytest.raises(ValueError, match="steps"):
        attribute_ids(model, SRC, TGT, steps=0)


def test_rollout_rows_sum_to_one_and_mix_the_residual():
    rng = np.random.default_rng(0)
    maps = rng.random((3, 4, 6, 6))
    maps /= maps.sum(-1, keepdims=True)
    rollout = attention_rollout(maps)
    assert rollout.shape == (3, 6, 6)
    np.testing.assert_allclose(rollout.sum(-1), 1.0, atol=1e-6)
    first = 0.5 * maps[0].mean(0) + 0.5 * np.eye(6)
    np.testing.assert_allclose(rollout[0], first, atol=1e-6)
    second = 0.5 * maps[1].mean(0) + 0.5 * np.eye(6)
    np.testing.assert_allclose(rollout[1], second @ first, atol=1e-6)


def test_agreement_is_one_when_attention_peaks_where_attribution_does():
    T, S, L, H = 5, 6, 2, 3
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(T, S))
    cross = rng.random((L, H, T, S)) * 0.1
    peaks = scores[:, :-1].argmax(-1)  # the last source column is </s>, left out
    cross[:, :, np.arange(T), peaks] = 1.0
    cross[:, :, :, -1] = 5.0  # attention parked on </s> must not count
    keep_src = np.array([True] * (S - 1) + [False])
    keep_tgt = np.ones(T, dtype=bool)
    per_head, per_layer, counted = agreement(cross, scores, keep_src, keep_tgt)
    np.testing.assert_array_equal(per_head, np.ones((L, H)))
    np.testing.assert_array_equal(per_layer, np.ones(L))
    assert counted == T


def test_agreement_counts_the_share_of_matching_rows():
    scores = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # (T=4, S=2)
    cross = np.array([[[[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]]]])  # one layer, one head
    per_head, per_layer, counted = agreement(cross, scores, np.ones(2, bool), np.array([True, True, True, False]))
    assert per_head[0, 0] == pytest.approx(2 / 3) and per_layer[0] == pytest.approx(2 / 3) and counted == 3
    assert 0.0 <= per_head.min() and per_head.max() <= 1.0


def test_special_tokens_are_left_out():
    config = tiny_model().config
    src_keep, tgt_keep = special_token_masks(config, SRC, TGT)
    assert src_keep.tolist() == [True] * 5 + [False] and tgt_keep.tolist() == [True] * 4 + [False]


def test_attribute_a_sentence(tiny_checkpoint):
    from translation import Translator

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    result = attribute(translator, "Ein Mann fährt Fahrrad.", steps=8, num_beams=1, max_new_tokens=6)
    S, T = len(result.source_tokens), len(result.target_tokens)
    assert result.scores.shape == (T, S) and result.rollout.shape == (2, S, S)
    assert result.cross_rollout.shape == (2, T, S)
    np.testing.assert_allclose(result.cross_rollout.sum(-1), 1.0, atol=1e-5)  # distributions stay distributions
    assert result.agreement.shape == (2, 4) and result.agreement_mean_heads.shape == (2,)
    assert ((0 <= result.agreement) & (result.agreement <= 1)).all()
    again = attribute(translator, "Ein Mann fährt Fahrrad.", method="input_x_gradient", num_beams=1, max_new_tokens=6)
    assert again.target_tokens == result.target_tokens and again.steps == 1
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["method"] == "integrated_gradients" and len(payload["scores"]) == T
    with pytest.raises(ValueError, match="non-empty"):
        attribute(translator, "   ")
