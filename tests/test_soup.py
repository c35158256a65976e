"""recipes/soup.py: the mean of the weights of checkpoints with one shape and tokenizer, written as a
checkpoint folder whose card and results.json name its ingredients."""

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest
import torch

from model import Transformer
from translation import Translator

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("soup", ROOT / "recipes" / "soup.py")
soup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(soup)


def trained_copy(tiny_checkpoint: Path, folder: Path, shift: float, steps: int) -> Path:
    """The tiny checkpoint with every weight moved by `shift` and a results.json of its 'training'."""
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    with torch.no_grad():
        for p in translator.model.parameters():
            p.add_(shift)
    translator.save_pretrained(folder)
    record = {"results": {}, "training": {"command": f"train.py --shift {shift}", "steps": steps, "wall_time_s": 60}}
    (folder / "results.json").write_text(json.dumps(record))
    return folder


def test_the_soup_is_the_mean_of_the_weights_and_its_card_names_the_ingredients(tiny_checkpoint, tmp_path):
    a = trained_copy(tiny_checkpoint, tmp_path / "a", 0.5, 100)
    b = trained_copy(tiny_checkpoint, tmp_path / "b", -0.1, 300)
    mixed = soup.averaged([a, b])
    original = Translator.from_pretrained(tiny_checkpoint, device="cpu").model.state_dict()
    for name, tensor in mixed.model.state_dict().items():
        assert torch.allclose(tensor, original[name] + 0.2, atol=1e-5), name  # (0.5 - 0.1) / 2
    results = {"val": {"bleu": 1.0, "chrf": 2.0}, "everyday_dev": {"bleu": 3.0, "chrf": 4.0}}
    soup.write(mixed, [a, b], results, {"test_hypotheses.txt": "A test.\n"}, tmp_path / "out")
    info = json.loads((tmp_path / "out" / "results.json").read_text())
    assert info["results"] == results and info["training"]["soup"] == [
        {"folder": str(a), "command": "train.py --shift 0.5", "steps": 100, "wall_time_s": 60}
    ]
    card = (tmp_path / "out" / "README.md").read_text()
    assert f"- Weights: the mean of this run's weights and those of `{a}` (100 steps)" in card
    reloaded = Translator.from_pretrained(tmp_path / "out", device="cpu").model.state_dict()
    assert all(torch.equal(reloaded[name], tensor) for name, tensor in mixed.model.state_dict().items())
    assert (tmp_path / "out" / "test_hypotheses.txt").read_text() == "A test.\n"


def test_checkpoints_of_another_shape_are_refused(tiny_checkpoint, tmp_path):
    a = trained_copy(tiny_checkpoint, tmp_path / "a", 0.0, 1)
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    wider = dataclasses.replace(translator.model.config, d_ff=128)
    Translator(Transformer(wider), translator.tokenizer, device="cpu").save_pretrained(tmp_path / "b")
    with pytest.raises(SystemExit, match="another shape or tokenizer"):
        soup.averaged([a, tmp_path / "b"])


def test_a_weighted_soup_moves_along_the_line_and_its_card_gives_the_shares(tiny_checkpoint, tmp_path):
    a = trained_copy(tiny_checkpoint, tmp_path / "a", 1.0, 100)
    b = trained_copy(tiny_checkpoint, tmp_path / "b", 0.0, 300)
    weights = soup.shares("0.3,0.7", 2)
    mixed = soup.averaged([a, b], weights)
    original = Translator.from_pretrained(tiny_checkpoint, device="cpu").model.state_dict()
    for name, tensor in mixed.model.state_dict().items():
        assert torch.allclose(tensor, original[name] + 0.3, atol=1e-5), name  # 0.3 * 1.0 + 0.7 * 0.0
    soup.write(mixed, [a, b], {}, {}, tmp_path / "out", weights)
    card = (tmp_path / "out" / "README.md").read_text()
    assert f"- Weights: 0.70 of this run's weights and 0.30 of `{a}`'s" in card


@pytest.mark.parametrize("text", ["0.5", "0.6,0.6", "-0.2,1.2", "half,half"])
def test_shares_that_are_not_a_split_of_one_are_refused(text):
    with pytest.raises(SystemExit, match="--weights"):
        soup.shares(text, 2)


def test_a_soup_by_part_gives_each_part_its_own_share(tiny_checkpoint, tmp_path):
    a = trained_copy(tiny_checkpoint, tmp_path / "a", 1.0, 100)
    b = trained_copy(tiny_checkpoint, tmp_path / "b", 0.0, 300)
    mixed = soup.averaged_by_part([a, b], soup.part_shares("0.5,1,0.25"))
    original = Translator.from_pretrained(tiny_checkpoint, device="cpu").model.state_dict()
    seen = set()
    for name, tensor in mixed.model.state_dict().items():
        part = soup.part_of(name)
        seen.add(part)
        assert torch.allclose(tensor, original[name] + (0.5, 0.0, 0.75)[part], atol=1e-5), name  # a's rest of 1.0
    assert seen == {0, 1, 2}
    with pytest.raises(SystemExit, match="two checkpoints"):
        soup.averaged_by_part([a, b, a], [0.5, 0.5, 0.5])


@pytest.mark.parametrize("text", ["0.5,1", "0.5,1,1.5", "-0.1,0.5,0.5", "a,b,c"])
def test_part_shares_out_of_range_or_count_are_refused(text):
    with pytest.raises(SystemExit, match="--by-part"):
        soup.part_shares(text)
