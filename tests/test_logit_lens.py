"""lens/logit_lens.py: every decoder stage read as a prediction; the last stage is the model's own output."""

import numpy as np

from lens.explain import DecodingOptions, explain_batch
from lens.logit_lens import TOP, logit_lens

SENTENCE = "Ein Mann fährt Fahrrad."
OPTIONS = DecodingOptions(num_beams=1, max_new_tokens=8)


def test_the_stages_are_the_embedding_and_every_sublayer_and_the_last_is_the_models_output(tiny_translator):
    lens = logit_lens(tiny_translator, SENTENCE, OPTIONS)
    n = tiny_translator.config.n_decoder_layers
    assert len(lens.stages) == 1 + 3 * n and lens.stages[0] == "embedding"
    assert lens.stages[1:4] == ["layer 1 self-attention", "layer 1 cross-attention", "layer 1 feed-forward"]
    e = explain_batch(tiny_translator, [SENTENCE], OPTIONS)[0].explanation
    assert lens.target_tokens == e.target_tokens
    np.testing.assert_allclose(lens.prob[-1], e.target_probs, atol=1e-5)
    assert all(len(row) == len(e.target_tokens) for row in lens.prob)
    assert all(0.0 <= p <= 1.0 for row in lens.prob for p in row)


def test_top_candidates_are_sorted_and_decided_at_marks_where_the_word_stays_the_favourite(tiny_translator):
    lens = logit_lens(tiny_translator, SENTENCE, OPTIONS)
    for stage, steps in enumerate(lens.top):
        for step, candidates in enumerate(steps):
            assert len(candidates) == TOP
            probs = [c["prob"] for c in candidates]
            assert probs == sorted(probs, reverse=True)
            assert lens.prob[stage][step] <= probs[0] + 1e-4
    for step, stage in enumerate(lens.decided_at):
        assert 0 <= stage < len(lens.stages)
        if lens.top[-1][step][0]["token"] == lens.target_tokens[step]:  # greedy: the last stage's favourite
            assert all(
                lens.top[s][step][0]["token"] == lens.target_tokens[step] for s in range(stage, len(lens.stages))
            )


def test_a_prefix_forces_the_start_and_the_ladder_reads_that_translation(tiny_translator):
    forced = tiny_translator.encode_prefix("A dog")
    lens = logit_lens(tiny_translator, SENTENCE, OPTIONS, prefix="A dog")
    e = explain_batch(tiny_translator, [SENTENCE], OPTIONS, prefix="A dog")[0].explanation
    assert lens.target_tokens == e.target_tokens and lens.target_tokens[: len(forced)] == e.target_tokens[: len(forced)]
    np.testing.assert_allclose(lens.prob[-1], e.target_probs, atol=1e-5)
