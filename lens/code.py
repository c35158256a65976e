"""The model's own source with the page's sentence in it: for one layer, each line that offers a tapped tensor
(model/tap_lines.py), that tensor's shape for this sentence and a peek at its values (the first few, the mean,
the spread), read off the teacher-forced pass over the sentence and its translation, as the Code view shows them.

    code_view(translator, "Ich möchte ein Bier.", layer=1)
    # {"files": {"model/attention.py": "...", ...}, "taps": [{"tap": "encoder.{i}.self_attn.q",
    #   "name": "encoder.0.self_attn.q", "file": "model/attention.py", "line": 154, "shape": [1, 4, 6, 64], ...}]}

Shape legend: B batch (1 here), S source and T target length, H heads, d_k head width, D model width.
"""

from __future__ import annotations

from functools import cache

import torch

from model.tap_lines import ROOT, tap_lines
from translation.translator import Translator

from .cost import checked_whole
from .explain import DecodingOptions, decode_one
from .stream import read

FILES = ("model/attention.py", "model/layers.py", "model/transformer.py", "generation/search.py")  # as shown
PEEK = 6  # the first values of a tensor shown beside its line


@cache
def source(path: str) -> str:
    """A file the view shows, as it is in the repository."""
    return (ROOT / path).read_text(encoding="utf-8")


def layered(name: str, layer: int) -> str:
    """A tap name with its {i} made the layer counted from 0: "encoder.{i}.ff.out", 1 -> "encoder.1.ff.out"."""
    return name.replace("{i}", str(layer))


def peek(value: torch.Tensor) -> dict:
    """A tensor's shape and a look at its numbers: the first PEEK (the first row's), the mean and the spread."""
    flat = value.detach().float().flatten()
    finite = flat[torch.isfinite(flat)]  # a masked score is -inf: it is counted apart
    return {
        "shape": list(value.shape),
        "first": [round(float(v), 4) for v in flat[:PEEK]],
        "mean": round(float(finite.mean()), 4) if finite.numel() else None,
        "std": round(float(finite.std(unbiased=False)), 4) if finite.numel() else None,
        "masked": int(flat.numel() - finite.numel()),
    }


@torch.inference_mode()
def code_view(translator: Translator, text: str, layer: int = 1, options: DecodingOptions | None = None) -> dict:
    """Every tapped line of the shown files with its tensor for one sentence, the layers' taps at `layer`
    (counted from 1, a ValueError naming it where the model has no such layer in both stacks)."""
    config = translator.config
    most = min(config.n_encoder_layers, config.n_decoder_layers)
    layer = checked_whole(layer, "layer", 1, most)
    sentence = decode_one(translator, text, options)
    device = translator.device
    src = torch.tensor([sentence.source_ids], device=device)  # (1, S)
    tgt = torch.tensor([sentence.input_ids], device=device)  # (1, T): BOS + the translation but its last piece
    lines = tap_lines(config)
    names = {key: layered(key, layer - 1) for key in lines}
    seen, _ = read(translator.model, src, tgt, list(names.values()), need_weights=True)
    taps = []
    for key, where in lines.items():
        value = seen.get(names[key])
        if value is None or where.offered.file not in FILES:
            continue
        taps.append(
            {
                "tap": key,
                "name": names[key],
                "file": where.offered.file,
                "line": where.offered.line,
                "caller_file": where.caller.file,
                "caller_line": where.caller.line,
                **peek(value),
            }
        )
    return {
        "layer": layer,
        "layers": most,
        "source_ids": sentence.source_ids,
        "input_ids": sentence.input_ids,
        "files": {path: source(path) for path in FILES},
        "taps": taps,
    }


def code_map(config) -> dict:
    """What the page's own Code view needs besides the model (ui/static/inside.js answers /code with it): the
    files shown, and each tap's line in them, read off the forward pass as code_view reads it."""
    lines = {
        key: {
            "file": where.offered.file,
            "line": where.offered.line,
            "caller_file": where.caller.file,
            "caller_line": where.caller.line,
        }
        for key, where in tap_lines(config).items()
        if where.offered.file in FILES
    }
    return {"files": {path: source(path) for path in FILES}, "lines": lines}
