"""The static site's int8 weights (ui/row_int8.py): within half a step of each row's scale, zero kept exactly, a
file the page (transformer.js, run by node) reads to the same fp32 numbers Python dequantises, a model that
computes with them, and refusals by name."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from ui.row_int8 import SCALE, computing_with, dequantised, int8_weights, parameters, quantised_rows

ROOT = Path(__file__).resolve().parent.parent


def test_each_number_is_within_half_a_step_of_its_rows_scale():
    torch.manual_seed(0)
    w = torch.randn(64, 48) * torch.logspace(-3, 1, 64)[:, None]  # rows of very different sizes
    w[5] = 0.0
    q, scale = quantised_rows(w)
    assert q.dtype == torch.int8 and q.abs().max() <= 127 and scale.shape == (64,)
    back = q.float() * scale[:, None]
    assert torch.all((back - w).abs() <= scale[:, None] / 2 + 1e-7)
    assert torch.equal(back[5], torch.zeros(48)) and (q.abs().amax(dim=1)[torch.arange(64) != 5] == 127).all()


def test_matrices_become_int8_and_vectors_fp16():
    weights = {"a.weight": torch.randn(8, 4), "a.bias": torch.randn(8), "norm.weight": torch.ones(4)}
    stored = int8_weights(weights)
    assert stored["a.weight"].dtype == torch.int8 and stored["a.weight" + SCALE].dtype == torch.float32
    assert stored["a.bias"].dtype == torch.float16 and parameters(stored) == 32 + 8 + 4
    floats = dequantised(stored)
    assert set(floats) == set(weights) and torch.allclose(floats["a.weight"], weights["a.weight"], atol=0.02)
    with pytest.raises(ValueError, match="marks the scales"):
        int8_weights({"x" + SCALE: torch.ones(2, 2)})
    with pytest.raises(ValueError, match="has no scales"):
        dequantised({"a.weight": stored["a.weight"]})
    with pytest.raises(ValueError, match="only a matrix"):
        quantised_rows(torch.ones(2, 2, 2))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_reads_an_int8_file_to_pythons_numbers(tmp_path):
    torch.manual_seed(1)
    stored = int8_weights({"w": torch.randn(5, 7), "b": torch.randn(7)})
    save_file(stored, str(tmp_path / "weights.safetensors"))
    script = (
        "import { readFileSync } from 'node:fs';"
        f"import {{ readSafetensors }} from '{(ROOT / 'ui/static/transformer.js').as_uri()}';"
        "const b = readFileSync(process.argv[1]);"
        "const t = readSafetensors(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));"
        "console.log(JSON.stringify(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Array.from(v.data)]))));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(tmp_path / "weights.safetensors")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout)
    assert set(page) == {"w", "b"}  # the scales are read into their matrix, not kept as tensors
    for name, values in dequantised(stored).items():
        assert page[name] == values.flatten().tolist(), name  # the same fp32 numbers, exactly


def test_a_model_computes_with_a_sites_int8_weights(tiny_checkpoint, tmp_path):
    from translation import Translator
    from ui.export_site import weights_of

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    stored = weights_of(translator, "int8")
    save_file(stored, str(tmp_path / "weights.safetensors"))
    page_model = computing_with(
        Translator.from_pretrained(tiny_checkpoint, device="cpu"), tmp_path / "weights.safetensors"
    )
    mine, original = page_model.model.state_dict(), translator.model.state_dict()
    matrix = next(name for name, t in stored.items() if t.dtype == torch.int8)
    assert torch.equal(mine[matrix], dequantised(stored)[matrix]) and not torch.equal(mine[matrix], original[matrix])
    assert isinstance(page_model.translate("Ein Hund.", num_beams=1, max_new_tokens=5), str)
    save_file({"nothing.weight": torch.ones(2, 2)}, str(tmp_path / "wrong.safetensors"))
    with pytest.raises(ValueError, match="does not fit the model"):
        computing_with(translator, tmp_path / "wrong.safetensors")
