"""lens/contrast.py: why the written piece and not another: the logit difference, its attribution to the
German tokens (complete), and the effect of each head on it."""

import numpy as np
import pytest

from lens.contrast import alternative_id, contrast
from lens.explain import DecodingOptions, explain_batch

SENTENCE = "Ein Mann fährt Fahrrad."
OPTIONS = DecodingOptions(num_beams=1, max_new_tokens=8)


def test_the_attribution_is_complete_and_the_difference_is_the_models(tiny_translator):
    result = contrast(tiny_translator, SENTENCE, 1, "woman", OPTIONS, steps=64)
    target = result.logit_diff - result.baseline_logit_diff
    assert abs(sum(result.source_attribution) - target) <= 0.03 * max(1.0, abs(target))
    assert abs(result.completeness_gap) <= 0.03 * max(1.0, abs(target))
    sentence = explain_batch(tiny_translator, [SENTENCE], OPTIONS)[0]
    assert len(result.source_attribution) == len(sentence.explanation.source_tokens)
    import torch

    with torch.no_grad():  # the model's own logits after BOS
        logits = tiny_translator.model(torch.tensor([sentence.source_ids]), torch.tensor([sentence.input_ids[:1]]))[
            0, -1
        ]
    chosen, other = sentence.output_ids[0], alternative_id(tiny_translator, "woman")[0]
    assert abs(float(logits[chosen] - logits[other]) - result.logit_diff) < 1e-4
    assert result.logit_diff >= 0  # greedy wrote the favourite


def test_each_head_has_an_effect_and_one_that_is_off_everywhere_changes_nothing(tiny_translator):
    result = contrast(tiny_translator, SENTENCE, 2, "dog", OPTIONS, steps=8)
    config = tiny_translator.config
    assert {k: np.array(v).shape for k, v in result.heads.items()} == {
        "encoder": (config.n_encoder_layers, config.n_heads),
        "decoder": (config.n_decoder_layers, config.n_heads),
        "cross": (config.n_decoder_layers, config.n_heads),
    }
    assert any(abs(e) > 1e-6 for rows in result.heads.values() for row in rows for e in row)


@pytest.mark.parametrize(
    "step, alternative, message",
    [
        (0, "dog", "step must be a whole number from 1 to"),
        (99, "dog", "step must be a whole number from 1 to"),
        (1.5, "dog", "step must be a whole number"),
        (1, "", "alternative must be an English word"),
    ],
)
def test_bad_arguments_are_refused_by_name(tiny_translator, step, alternative, message):
    with pytest.raises(ValueError, match=message):
        contrast(tiny_translator, SENTENCE, step, alternative, OPTIONS, steps=4)


def test_contrast_in_one_point_chunks_gives_the_same_attribution(tiny_translator, monkeypatch):
    from lens import contrast as module
    from lens import cost

    whole = module.contrast(tiny_translator, "Ein Mann fährt Fahrrad.", 1, "a", steps=16)
    monkeypatch.setattr(cost, "CHUNK_CELLS", 1)
    assert module.path_rows(tiny_translator.config, 8, 2) == 1
    chunked = module.contrast(tiny_translator, "Ein Mann fährt Fahrrad.", 1, "a", steps=16)
    assert chunked.source_attribution == pytest.approx(whole.source_attribution, abs=1e-4)


def test_a_contrast_past_its_work_budget_is_refused_by_name(tiny_translator, monkeypatch):
    from lens import contrast as module
    from lens import cost

    monkeypatch.setattr(cost, "CONTRAST_WORK", cost.WorkBudget("/contrast", 10, "use a shorter sentence"))
    with pytest.raises(ValueError, match="/contrast would compute"):
        module.contrast(tiny_translator, "Ein Mann fährt Fahrrad.", 1, "a")
