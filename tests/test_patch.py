"""lens/patch.py on the shipped checkpoint: patching the embedding of the one swapped word restores the clean
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
    from model import Translator

    return Translator.from_pretrained(CHECKPOINT, device="cpu")


def test_the_swapped_words_embedding_carries_the_whole_choice_and_nothing_else_does(translator):
    from lens.patch import patch

    result = patch(translator, CLEAN, CORRUPTED, 2)
    assert (result.clean_piece, result.corrupted_piece) == ("▁dog", "▁horse")
    assert result.clean_diff > 0 > result.corrupted_diff and result.levels[0] == "embedding"
    swapped = result.source_tokens.index("▁Hund")
    assert abs(result.recovered[0][swapped] - 1.0) < 1e-4  # the corrupted input, patched there, is the clean input
    assert all(abs(v) < 1e-4 for i, v in enumerate(result.recovered[0]) if i != swapped)  # same vectors: no change
    assert len(result.recovered) == translator.config.n_encoder_layers + 1
    assert all(len(row) == len(result.source_tokens) for row in result.recovered)


@pytest.mark.parametrize("corrupted, step, message", [
    ("Eine große Katze rennt über die Wiese.", 2, "swap a word for one of as many pieces"),
    (CLEAN, 2, "the corrupted sentence is the clean one"),
    (CORRUPTED, 99, "step must be a whole number from 1 to"),
    ("Ein Hund rennt über die Straße.", 2, "still gives"),  # the word at step 2 (dog) does not change
])
def test_what_cannot_be_patched_is_refused_in_words(translator, corrupted, step, message):
    from lens.patch import patch

    with pytest.raises(ValueError, match=message):
        patch(translator, CLEAN, corrupted, step)
