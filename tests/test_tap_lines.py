"""Where each tap is offered in the model's source (model/tap_lines.py): every tap name has its line, the line is
the one that offers it, and a line that moves takes its tap with it."""

import importlib
import shutil
import sys
from pathlib import Path

from model.config import TransformerConfig
from model.tap_lines import layer_free, tap_lines
from model.tap_names import tap_names

ROOT = Path(__file__).resolve().parent.parent
SIZES = dict(vocab_size=32, d_model=16, n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=32, max_len=16)
CONFIG = TransformerConfig(**SIZES)


def test_every_tap_name_has_the_line_that_offers_it():
    lines = tap_lines(CONFIG)
    assert list(lines) == list(dict.fromkeys(layer_free(n) for n in tap_names(CONFIG)))
    for name, where in lines.items():
        source = (ROOT / where.offered.file).read_text(encoding="utf-8").splitlines()
        assert source[where.offered.line - 1].strip() == where.offered.text
        assert f'"{name.rsplit(".", 1)[-1]}"' in where.offered.text, (name, where.offered)  # it names the tap
        assert where.offered.file.startswith("model/") and where.caller.file.startswith("model/"), (name, where)
    # the residual sum is one line for every sublayer; its caller says which
    assert lines["encoder.{i}.self_attn.resid"].offered == lines["encoder.{i}.ff.resid"].offered
    assert "self.norm1" in lines["encoder.{i}.self_attn.resid"].caller.text or "sublayer(" in (
        lines["encoder.{i}.self_attn.resid"].caller.text
    )
    assert lines["encoder.{i}.self_attn.resid"].caller != lines["encoder.{i}.ff.resid"].caller
    assert "self.cross_attn" in lines["decoder.{i}.cross_attn.q"].caller.text


def test_a_line_that_moves_takes_its_tap_with_it(tmp_path, monkeypatch):
    copy = tmp_path / "moved_model"
    shutil.copytree(ROOT / "model", copy, ignore=shutil.ignore_patterns("__pycache__"))
    attention = copy / "attention.py"
    attention.write_text("\n\n\n" + attention.read_text(encoding="utf-8"), encoding="utf-8")  # three lines down
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        config = importlib.import_module("moved_model.config").TransformerConfig(**SIZES)  # the copy's own class
        moved = importlib.import_module("moved_model.tap_lines").tap_lines(config)
    finally:
        for name in [n for n in sys.modules if n == "moved_model" or n.startswith("moved_model.")]:
            del sys.modules[name]
    before = tap_lines(CONFIG)
    assert set(moved) == set(before)
    for name, where in before.items():
        shift = 3 if where.offered.file == "model/attention.py" else 0
        assert moved[name].offered.line == where.offered.line + shift, name
        assert moved[name].offered.text == where.offered.text
