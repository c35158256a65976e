"""lens/routed.py: the shipped captions and everyday checkpoints behind the domain guess, each text translated once
by the model its route names, in order; a captions checkpoint without a usable guess is refused by name."""

import shutil
from pathlib import Path

import pytest

from lens.routed import RoutedTranslator
from model import CheckpointError

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS, EVERYDAY = ROOT / "checkpoints" / "de-en", ROOT / "checkpoints" / "de-en-everyday"
TEXTS = ["Ein Hund rennt über eine Wiese.", "Wo ist der Bahnhof?", "Zwei Männer spielen Fußball im Park.",
         "Ich möchte ein Bier.", ""]


@pytest.fixture(scope="module")
def both():
    return RoutedTranslator.from_pretrained(CAPTIONS, EVERYDAY, device="cpu")


def test_each_text_goes_to_the_model_whose_german_it_reads_like(both):
    assert [both.route(t) for t in TEXTS] == ["captions", "everyday", "captions", "everyday", "captions"]
    out = both.translate(TEXTS, num_beams=2)
    alone = {kind: t.translate(TEXTS, num_beams=2) for kind, t in both.translators.items()}
    assert out == [alone[both.route(t)][i] for i, t in enumerate(TEXTS)]
    assert out[3] == "I want a beer." and out[4] == "" and alone["captions"][3] != out[3]
    assert both.translate("Wo ist der Bahnhof?", num_beams=2) == out[1]
    with pytest.raises(TypeError, match="expected text"):
        both.route(3)


def test_a_captions_checkpoint_without_its_guess_is_refused_by_name(tmp_path):
    folder = tmp_path / "de-en"
    shutil.copytree(CAPTIONS, folder, ignore=shutil.ignore_patterns("domain.json.gz", "snapshots"))
    with pytest.raises(CheckpointError, match="has no usable domain.json.gz"):
        RoutedTranslator.from_pretrained(folder, EVERYDAY)
    (folder / "domain.json.gz").write_bytes(b"not gzip")
    with pytest.raises(CheckpointError, match="has no usable domain.json.gz"):
        RoutedTranslator.from_pretrained(folder, EVERYDAY)
