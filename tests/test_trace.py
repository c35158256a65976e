"""The decoding trace: recorded from the search generate runs, equal to a teacher-forced pass."""

import json

import numpy as np
import pytest
import torch

from lens.maps import teacher_forced
from lens.trace import trace
from model.heads import HeadMask
from tests.test_model import random_ids, tiny_model

TEXT = "Zwei Hunde spielen im Schnee."


@pytest.fixture(scope="module")
def translator(tiny_checkpoint):
    from translation import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


def test_cached_step_attention_equals_uncached():
    from generation.step import CachedDecoder, UncachedDecoder
    from model.attention import padding_mask

    model = tiny_model(seed=31)
    src, tgt = random_ids(2, 6, 1), random_ids(2, 5, 2)
    src[1, 4:] = 0
    with torch.inference_mode():
        src_mask = padding_mask(src, 0)
        memory, _ = model.encode(src, src_mask)
        cached = CachedDecoder(model, memory, src_mask, 1, capacity=5)
        uncached = UncachedDecoder(model, memory, src_mask, 1, capacity=5)
        for t in range(1, 6):
            (a, maps_a), (b, maps_b) = cached(tgt[:, :t], need_weights=True), uncached(tgt[:, :t], need_weights=True)
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
            for x, y in zip(maps_a.decoder + maps_a.cross, maps_b.decoder + maps_b.cross):
                torch.testing.assert_close(x, y, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("num_beams", [1, 3])
def test_trace_rows_equal_the_teacher_forced_pass(translator, num_beams):
    mask = HeadMask.all_on(translator.config).switched_off("cross", 0, 1) if num_beams == 3 else None
    result = trace(translator, TEXT, num_beams=num_beams, top_k=5, max_new_tokens=12, head_mask=mask)
    src_ids, _ = translator.encode_source(TEXT)
    reference = teacher_forced(translator, src_ids, result.target_ids, head_mask=mask)
    assert result.translation == translator.translate(TEXT, num_beams=num_beams, max_new_tokens=12, head_mask=mask)
    assert len(result.steps) == len(result.target_ids) == len(reference.target_tokens) > 1
    for t, step in enumerate(result.steps):
        assert step.token_id == result.target_ids[t] and not step.forced
        np.testing.assert_allclose(step.cross, reference.cross[:, :, t], atol=1e-5)
        np.testing.assert_allclose(step.decoder, reference.decoder[:, :, t, : t + 1], atol=1e-5)
        assert abs(step.prob - reference.target_probs[t]) < 1e-5


def test_probabilities_top_k_and_entropy(translator):
    result = trace(translator, TEXT, num_beams=2, top_k=7, max_new_tokens=10)
    for step in result.steps:
        assert len(step.top_ids) == 7 and len(set(step.top_ids)) == 7
        assert all(0.0 <= p <= 1.0 for p in step.top_probs + [step.prob])
        assert step.top_probs == sorted(step.top_probs, reverse=True)
        assert step.prob <= step.top_probs[0] + 1e-7
        assert 0.0 <= step.entropy <= np.log(translator.config.vocab_size) + 1e-4


def test_beam_tree_winner_and_nbest(translator):
    result = trace(translator, TEXT, num_beams=3, max_new_tokens=12)
    nodes = {n.id: n for n in result.beam}
    assert result.beam[0].parent == -1 and {n.status for n in result.beam} <= {
        "winner",
        "finished",
        "expanded",
        "pruned",
    }
    winner = nodes[result.nbest[0]]
    assert winner.status == "winner" and winner.token_ids == result.target_ids
    assert translator.decode(winner.token_ids) == translator.translate(TEXT, num_beams=3, max_new_tokens=12)
    # the winner's path runs back to the root, every node on it a winner
    node, depth = winner, 0
    while node.parent >= 0:
        assert node.status == "winner" and nodes[node.parent].token_ids == node.token_ids[:-1]
        node, depth = nodes[node.parent], depth + 1
    assert depth == len(winner.token_ids)
    scores = [nodes[i].score for i in result.nbest]
    assert scores == sorted(scores, reverse=True) and 1 <= len(result.nbest) <= 3
    assert all(nodes[i].status in ("winner", "finished") for i in result.nbest)
    for n in result.beam[1:]:  # cumulative log-probs only fall along a path
        assert n.log_prob <= nodes[n.parent].log_prob + 1e-6
        assert abs(n.score - n.log_prob / len(n.token_ids) ** result.length_penalty) < 1e-5


def test_forced_prefix_in_the_trace(translator):
    free = trace(translator, TEXT, max_new_tokens=12)
    own = trace(translator, TEXT, max_new_tokens=12, prefix=free.target_ids[:2])
    assert own.target_ids == free.target_ids and own.prefix_length == 2
    assert [s.forced for s in own.steps[:3]] == [True, True, False]
    forced = trace(translator, TEXT, num_beams=2, max_new_tokens=12, prefix="A cat")
    assert forced.translation.startswith("A cat") and forced.steps[0].forced


def test_trace_errors(translator):
    with pytest.raises(ValueError, match="top_k must be an integer"):
        trace(translator, TEXT, top_k=0)
    with pytest.raises(ValueError, match="non-empty sentence"):
        trace(translator, "  ")
    with pytest.raises(ValueError, match="longer than the 2 new tokens"):
        trace(translator, TEXT, max_new_tokens=2, prefix="a big brown dog")


def test_to_dict_is_json_with_token_strings(translator):
    result = trace(translator, TEXT, num_beams=2, top_k=3, max_new_tokens=8)
    d = json.loads(json.dumps(result.to_dict()))
    assert d["target_tokens"] == result.target_tokens and len(d["steps"]) == len(result.steps)
    step = d["steps"][0]
    assert isinstance(step["token"], str) and all(isinstance(c["token"], str) for c in step["top_k"])
    assert np.asarray(step["cross"]).shape == result.steps[0].cross.shape
    assert all(isinstance(n["token"], str) and n["status"] for n in d["beam"])
    assert d["nbest"][0]["tokens"] == result.target_tokens
