"""Every refusal names the argument it refuses: max_new_tokens of the Translator (0, negative, a fraction), /patch's
`corrupted` (not `text`), the lab's settings with their bounds and reasons."""

import pytest

from lab.settings import LabSettings
from ui.runtime import checked_text


@pytest.fixture(scope="module")
def translator():
    from translation import Translator

    return Translator.from_pretrained("checkpoints/de-en", device="cpu")


@pytest.mark.parametrize("value", [0, -5, 2.5, True, "8"])
def test_max_new_tokens_out_of_range_is_refused_by_its_name(translator, value):
    with pytest.raises(ValueError, match=rf"^max_new_tokens must be a whole number of at least 1, got {value!r}$"):
        translator.translate("Ein Hund läuft.", max_new_tokens=value)


def test_a_whole_float_and_a_short_output_are_answered(translator):
    assert translator.translate("Ein Hund läuft.", max_new_tokens=2.0) == translator.translate(
        "Ein Hund läuft.", max_new_tokens=2
    )


@pytest.mark.parametrize(
    ("value", "said"),
    [("", "corrupted must be German text, got an empty string"), (None, "corrupted must be a string, got NoneType"),
     ("a" * 20_000, "corrupted is 20,000 characters long")],
)  # fmt: skip
def test_the_patch_endpoints_corrupted_sentence_is_refused_as_corrupted(value, said):
    with pytest.raises((ValueError, TypeError), match=said):
        checked_text(value, "corrupted")


@pytest.mark.parametrize(
    ("change", "said"),
    [({"n_layers": 7}, r"n_layers must be from 1 to 6 \(six layers is the paper's depth"),
     ({"lr": float("nan")}, r"lr must be from 1e-05 to 1.0 \(beyond 1"), ({"steps": 2.5}, "steps must be a whole number"),
     ({"norm": "middle"}, "norm must be one of post, pre, none"), ({"causal": "no"}, "causal must be one of True, False"),
     ({"d_model": 30, "n_heads": 4}, r"d_model \(30\) must be divisible by n_heads \(4\)")],
)  # fmt: skip
def test_the_labs_settings_are_refused_by_name_with_the_reason(change, said):
    with pytest.raises(ValueError, match=said):
        LabSettings().changed(**change)
