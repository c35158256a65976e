"""lens/cost.py: what a request's maps weigh, known before decoding, and budgets that refuse before the work."""

import pytest

from lens import cost
from lens.explain import DecodingOptions, explain_batch, explain_one

SENTENCE = "Ein Mann fährt Fahrrad."


def test_map_weights_is_the_size_of_the_maps_explain_returns(tiny_translator):
    sentence = explain_batch(tiny_translator, [SENTENCE, "Zwei Hunde spielen im Schnee."], DecodingOptions(2, 1.0, 12))
    for explained in sentence:
        e = explained.explanation
        S, T = len(e.source_tokens), len(e.target_tokens)
        assert cost.map_weights(tiny_translator.config, S, T) == e.encoder.size + e.decoder.size + e.cross.size


def counting_generate(translator, monkeypatch) -> list:
    calls = []
    generate = translator.generate_ids

    def counted(*args, **kwargs):
        calls.append(1)
        return generate(*args, **kwargs)

    monkeypatch.setattr(translator, "generate_ids", counted)
    return calls


def test_a_text_past_the_budget_is_refused_before_decoding_with_what_to_shorten(tiny_translator, monkeypatch):
    decoded = counting_generate(tiny_translator, monkeypatch)
    small = cost.Budget("/explain", 20_000, "send fewer sentences")
    text = [SENTENCE] * 3 + ["Ein Hund läuft über eine grüne Wiese und " * 4]
    with pytest.raises(
        ValueError,
        match=r"these 4 sentences' maps would hold .* million attention weights; /explain "
        r"answers at most 0.0 million: send fewer sentences",
    ):
        explain_batch(tiny_translator, text, DecodingOptions(1, 1.0, 60), small)
    assert decoded == []  # refused before any decoding
    assert len(explain_batch(tiny_translator, text[:1], DecodingOptions(1, 1.0, 8), small)) == 1


def test_a_translation_longer_than_estimated_is_refused_before_its_maps_are_read(tiny_translator, monkeypatch):
    config = tiny_translator.config
    S = len(tiny_translator.encode_source(SENTENCE)[0])
    options = DecodingOptions(1, 1.0, config.max_len - 1)
    generated = tiny_translator.generate_ids(
        [tiny_translator.encode_source(SENTENCE)[0]], 1, 1.0, options.max_new_tokens
    )
    T = sum(1 for i in generated[0] if i != config.pad_id)
    assert T > S, "the untrained tiny model should write past the source's length"
    between = cost.Budget("/explain", (cost.map_weights(config, S, S) + cost.map_weights(config, S, T)) // 2, "shorten")
    read = []
    monkeypatch.setattr(tiny_translator.model, "forward", lambda *a, **k: read.append(1))  # the maps' pass
    with pytest.raises(ValueError, match="this sentence's maps would hold"):
        explain_one(tiny_translator, SENTENCE, options, between)
    assert read == []


def test_attribution_work_past_its_budget_names_the_steps_that_would_fit():
    cost.check_attribution(64, 30, 30)
    with pytest.raises(ValueError, match=r"use fewer steps \(at most 1\) or a shorter sentence"):
        cost.check_attribution(64, 250, 250)
