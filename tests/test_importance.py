"""Head importance and live ablation: scores move only when a head is really switched off, the JSON
is reproducible from its seed, the word diff marks exactly what changed."""

import json

import numpy as np
import pytest

from lens.ablate import ablate, least_important, most_important, word_diff
from lens.importance import (
    KINDS,
    VERSION,
    choose_slice,
    head_importance,
    importance_table_markdown,
    reference_pairs,
    reusable_agreement,
    score,
)
from lens.maps import explain
from model.heads import HeadMask

VAL_SRC = [
    "Ein Mann fährt Fahrrad.",
    "Zwei Hunde spielen im Schnee.",
    "Eine Frau liest ein Buch.",
    "Kinder laufen am Strand.",
    "Ein Junge springt ins Wasser.",
]
VAL_TGT = [
    "A man rides a bike.",
    "Two dogs play in the snow.",
    "A woman reads a book.",
    "Children run on the beach.",
    "A boy jumps into the water.",
]


class Corpus:
    src, tgt = VAL_SRC, VAL_TGT


@pytest.fixture(scope="module")
def translator(tiny_checkpoint):
    from translation import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


def test_slice_is_the_first_sentences_or_a_seeded_sample():
    first = choose_slice(Corpus, 3)
    assert first.indices == [0, 1, 2] and first.src == VAL_SRC[:3] and first.selection == "first"
    sample = choose_slice(Corpus, 3, seed=4)
    assert sample.indices == choose_slice(Corpus, 3, seed=4).indices and sample.indices == sorted(sample.indices)
    assert [VAL_SRC[i] for i in sample.indices] == sample.src and sample.seed == 4
    with pytest.raises(ValueError, match="--sentences"):
        choose_slice(Corpus, 0)


def test_all_on_equals_the_baseline_and_a_switched_off_head_changes_the_loss(translator):
    val = choose_slice(Corpus, 5)
    pairs = reference_pairs(translator, val)
    baseline = score(translator, val, pairs)
    all_on = HeadMask.all_on(translator.config)
    assert score(translator, val, pairs, all_on) == baseline
    for kind in KINDS:
        off = score(translator, val, pairs, all_on.switched_off(kind, 1, 2))
        assert off["val_loss"] != pytest.approx(baseline["val_loss"], abs=1e-6), kind


def test_importance_json_is_reproducible_from_its_seed(translator):
    val = choose_slice(Corpus, 2, seed=7)
    first = head_importance(translator, val, checkpoint="tiny", attribution="integrated_gradients", steps=4)
    second = head_importance(
        translator, choose_slice(Corpus, 2, seed=7), checkpoint="tiny", attribution="integrated_gradients", steps=4
    )
    first.pop("seconds"), second.pop("seconds")
    assert json.loads(json.dumps(first)) == second  # JSON-ready and identical
    assert first["version"] == VERSION and first["slice"]["indices"] == val.indices
    c = translator.config
    for kind in KINDS:
        for variant in ("switched_off", "only"):
            for metric in ("val_loss", "val_bleu"):
                assert np.array(first["kinds"][kind][variant][metric]).shape == (2, c.n_heads)
        importance = np.array(first["kinds"][kind]["importance"])
        expected = np.array(first["kinds"][kind]["switched_off"]["val_loss"]) - first["baseline"]["val_loss"]
        np.testing.assert_allclose(importance, expected, atol=2e-5)
    agreement = np.array(first["kinds"]["cross"]["agreement"])
    assert agreement.shape == (2, c.n_heads) and ((0 <= agreement) & (agreement <= 1)).all()
    assert first["agreement_tokens"] > 0
    reused = reusable_agreement(first, val, "integrated_gradients", 4)
    assert reused["agreement"] == first["kinds"]["cross"]["agreement"] and reused["tokens"] == first["agreement_tokens"]
    with pytest.raises(ValueError, match="another slice"):
        reusable_agreement(first, val, "integrated_gradients", 8)
    with pytest.raises(ValueError, match="another slice"):
        reusable_agreement(first, choose_slice(Corpus, 2), "integrated_gradients", 4)
    table = importance_table_markdown(first)
    assert table.count("\n| ") == 1 + 3 * 2 and "head 4" in table and "layer 2 head" in table


def fake_importance(values: dict) -> dict:
    return {"version": VERSION, "kinds": {kind: {"importance": values[kind]} for kind in KINDS}}


def test_most_and_least_important_heads():
    importance = fake_importance(
        {"encoder": [[0.1, 0.5], [0.0, 0.2]], "decoder": [[0.3, -0.1], [0.0, 0.0]], "cross": [[0.9, 0.05], [0.4, 0.01]]}
    )
    assert most_important(importance, None, 3) == [("cross", 0, 0), ("encoder", 0, 1), ("cross", 1, 0)]
    assert most_important(importance, "decoder", 1) == [("decoder", 0, 0)]
    assert least_important(importance, None, 1) == [("decoder", 0, 1)]
    assert least_important(importance, "cross", 2) == [("cross", 1, 1), ("cross", 0, 1)]
    with pytest.raises(ValueError, match="kind"):
        most_important(importance, "self", 1)


@pytest.mark.parametrize(
    "original, ablated, before, after",
    [
        ("A man rides a bike .", "A man rides a bike .", [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]),
        ("A man rides a bike .", "A woman rides a bike .", [0, 1, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0]),
        ("A man rides a bike .", "A man rides a red bike .", [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0, 0]),
        ("A man rides a bike .", "A man rides .", [0, 0, 0, 1, 1, 0], [0, 0, 0, 0]),
        ("A dog .", "", [1, 1, 1], []),
    ],
)
def test_word_diff_marks_exactly_the_changed_words(original, ablated, before, after):
    diff = word_diff(original, ablated)
    assert diff.original_words == original.split() and diff.ablated_words == ablated.split()
    assert diff.original_changed == [bool(b) for b in before] and diff.ablated_changed == [bool(a) for a in after]
    assert diff.n_changed == sum(before) + sum(after)


def test_ablate_translates_with_and_without_the_heads(translator):
    c = translator.config
    all_on = HeadMask.all_on(c)
    same = ablate(translator, VAL_SRC[0], all_on, num_beams=1, max_new_tokens=8)
    assert same.ablated == same.original and same.diff.n_changed == 0 and same.switched_off == []
    mask = all_on.switched_off("cross", 0, 1).switched_off("encoder", 1, 3)
    result = ablate(translator, VAL_SRC[0], mask.to_dict(), num_beams=1, max_new_tokens=8)
    assert result.switched_off == [("encoder", 1, 3), ("cross", 0, 1)]
    expected = explain(translator, VAL_SRC[0], num_beams=1, max_new_tokens=8, head_mask=mask)
    assert result.ablated == expected.translation
    np.testing.assert_array_equal(result.explanation.cross, expected.cross)
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["head_mask"]["cross"][0][1] == 0 and payload["original"] == same.original
    with pytest.raises(TypeError, match="head_mask"):
        ablate(translator, VAL_SRC[0], [[1]])
