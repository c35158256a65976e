"""lens/patching.py on the shipped checkpoint: patching the embedding of the one swapped word restores the clean
choice exactly, every other position changes nothing, and what cannot be patched is refused in words."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "de-en"
CLEAN, CORRUPTED = "Ein Hund rennt über die Wiese.", "Ein Pferd rennt über die Wiese."


@pytest.fixture(scope="module")
def translator():
    if not (CHECKPOINT / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint is missing")
    from translation import Translator

    return Translator.from_pretrained(CHECKPOINT, device="cpu")


def test_the_swapped_words_embedding_carries_the_whole_choice_and_nothing_else_does(translator):
    from lens.patching import patch

    result = patch(translator, CLEAN, CORRUPTED, 2)
    assert (result.clean_piece, result.corrupted_piece) == ("▁dog", "▁horse")
    assert result.clean_diff > 0 > result.corrupted_diff and result.levels[0] == "embedding"
    swapped = result.source_tokens.index("▁Hund")
    assert abs(result.recovered[0][swapped] - 1.0) < 1e-4  # the corrupted input, patched there, is the clean input
    assert all(abs(v) < 1e-4 for i, v in enumerate(result.recovered[0]) if i != swapped)  # same vectors: no change
    assert len(result.recovered) == translator.config.n_encoder_layers + 1
    assert all(len(row) == len(result.source_tokens) for row in result.recovered)


@pytest.mark.parametrize(
    "corrupted, step, message",
    [
        ("Eine große Katze rennt über die Wiese.", 2, "swap a word for one of as many pieces"),
        (CLEAN, 2, "the corrupted sentence is the clean one"),
        (CORRUPTED, 99, "step must be a whole number from 1 to"),
        ("Ein Hund rennt über die Straße.", 2, "still gives"),  # the word at step 2 (dog) does not change
    ],
)
def test_what_cannot_be_patched_is_refused_in_words(translator, corrupted, step, message):
    from lens.patching import patch

    with pytest.raises(ValueError, match=message):
        patch(translator, CLEAN, corrupted, step)


def test_patching_every_head_restores_the_choice_and_patching_none_changes_nothing(translator):
    from lens.patching import patch

    result = patch(translator, CLEAN, CORRUPTED)  # no step: the first where the translations differ
    assert result.step == 2 and result.clean_translation.startswith("A dog") and "horse" in result.corrupted_translation
    assert abs(result.all - 1.0) < 1e-3 and abs(result.none) < 1e-3  # computed from the patched runs, not written in
    c = translator.config
    assert [len(result.restored[k]) for k in ("encoder", "decoder", "cross")] == [
        c.n_encoder_layers,
        c.n_decoder_layers,
        c.n_decoder_layers,
    ]
    assert all(len(row) == c.n_heads for grid in result.restored.values() for row in grid)
    best = result.top_heads[0]
    assert result.restored[best["kind"]][best["layer"] - 1][best["head"] - 1] == best["restored"]
    assert best["restored"] == max(v for grid in result.restored.values() for row in grid for v in row)
    assert abs(result.restored["decoder"][0][0]) < 1e-3  # the English before the step is the same in both runs


def test_a_head_switched_off_everywhere_restores_nothing(translator):
    from lens.patching import patch
    from model.heads import HeadMask

    best = patch(translator, CLEAN, CORRUPTED).top_heads[0]
    mask = HeadMask.all_on(translator.config).switched_off(best["kind"], best["layer"] - 1, best["head"] - 1)
    result = patch(translator, CLEAN, CORRUPTED, head_mask=mask)
    assert abs(result.restored[best["kind"]][best["layer"] - 1][best["head"] - 1]) < 1e-4
    assert abs(result.all - 1.0) < 1e-3


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-ln", "pre-ln"])
def test_the_replay_with_nothing_patched_is_the_model(tiny_checkpoint, norm_first):
    import torch

    from lens.patching_heads import replay
    from model import Transformer, TransformerConfig
    from translation import Translator

    tiny = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    torch.manual_seed(2)
    model = Transformer(TransformerConfig(**{**tiny.config.to_dict(), "norm_first": norm_first})).eval()
    src, prefix = torch.tensor([[5, 9, 14, 2]]), torch.tensor([[1, 7, 11]])
    with torch.inference_mode():
        mine, outputs = replay(model, src, prefix)
        torch.testing.assert_close(mine[0], model(src, prefix)[0, -1].float(), atol=1e-5, rtol=1e-5)
    assert [len(outputs[k]) for k in ("encoder", "decoder", "cross")] == [2, 2, 2]


def test_patching_in_small_chunks_gives_the_same_answer(translator, monkeypatch):
    """The runs go through the model a few at a time (lens.cost.CHUNK_CELLS), whatever the chunk, the same numbers."""
    from lens import cost
    from lens.patching import patch

    whole = patch(translator, CLEAN, CORRUPTED, 2)
    monkeypatch.setattr(cost, "CHUNK_CELLS", 1)  # one run a chunk
    assert cost.rows_per_chunk(cost.run_cells(translator.config, 8, 2)) == 1
    chunked = patch(translator, CLEAN, CORRUPTED, 2)
    for level, row in enumerate(whole.recovered):
        assert chunked.recovered[level] == pytest.approx(row, abs=1e-3)


def test_a_patch_past_its_work_budget_is_refused_before_the_work(translator, monkeypatch):
    from lens import cost
    from lens.patching import patch

    monkeypatch.setattr(cost, "PATCH_WORK", cost.WorkBudget("/patch", 1_000, "use shorter sentences"))
    with pytest.raises(ValueError, match="/patch would compute .* million attention weights .* use shorter sentences"):
        patch(translator, CLEAN, CORRUPTED, 2)


def test_the_largest_patch_the_budget_allows_is_near_its_worst_case(translator):
    """The budget lets in a 180-piece sentence at an early step (load/abuse.py's largest_patch) and refuses a
    256-piece one: the row of docs/limits.md."""
    from lens import cost
    from lens.patching import check_patch_work

    check_patch_work(translator.config, 180, 1)
    with pytest.raises(ValueError, match="/patch would compute"):
        check_patch_work(translator.config, 256, 1)
    assert cost.PATCH_WORK.max_work == 500_000_000
