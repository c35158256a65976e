"""Where each tap (model/taps.py) is offered in the model's source: its name, the layer written `{i}`, to the file
and line that offer it, as the page's Code view shows them with the visitor's numbers.

Read off the forward pass itself, never written down a second time: a model built on the meta device (shapes
only) runs once with a tap that looks at who called it, the first frame outside model/taps.py's plumbing. A line
moved, added or removed moves its tap with it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import FrameType
from typing import NamedTuple

import torch
from torch import Tensor

from .config import TransformerConfig
from .transformer import Transformer

PLUMBING = Path(__file__).with_name("taps.py")  # offer, under, tapped: they pass a value on, they make none
ROOT = Path(__file__).resolve().parent.parent  # the repository: files are named relative to it
LAYER = re.compile(r"\.\d+\.")


class SourceLine(NamedTuple):
    file: str  # relative to the repository, "model/attention.py"
    line: int  # counted from 1
    text: str  # the line as written, stripped


class TapLine(NamedTuple):
    offered: SourceLine  # the line that offers the value (for "resid": the residual sum both sublayers share)
    caller: SourceLine  # the model's line that called that function (for "resid": which sublayer it is)


def layer_free(name: str) -> str:
    """A tap's name with its layer written {i}: "encoder.2.self_attn.q" -> "encoder.{i}.self_attn.q"."""
    return LAYER.sub(".{i}.", name, count=1)


def source_line(frame: FrameType) -> SourceLine:
    path = Path(frame.f_code.co_filename).resolve()
    text = path.read_text(encoding="utf-8").splitlines()[frame.f_lineno - 1].strip()
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()
    return SourceLine(name, frame.f_lineno, text)


def model_code(frame: FrameType) -> bool:
    """A frame of the model's own files (not torch's, not this reader's)."""
    path = Path(frame.f_code.co_filename).resolve()
    return path.parent == PLUMBING.resolve().parent and path != Path(__file__).resolve()


def offering_line() -> TapLine:
    """The line of the model that offered the value the tap is looking at now (plumbing skipped), and its caller."""
    frame: FrameType | None = sys._getframe(2)  # the recording tap's caller
    while frame is not None and Path(frame.f_code.co_filename).resolve() == PLUMBING.resolve():
        frame = frame.f_back
    assert frame is not None, "a tap called from nowhere"
    caller = frame.f_back  # the model's own line above it (torch's module call machinery skipped)
    while caller is not None and not model_code(caller):
        caller = caller.f_back
    return TapLine(source_line(frame), source_line(caller if caller is not None else frame))


def tap_lines(config: TransformerConfig) -> dict[str, TapLine]:
    """Each tap name `Transformer.forward` offers with the maps asked for (layers as {i}), in the order offered,
    with the line that offers it and the line that called it."""
    with torch.device("meta"):
        model = Transformer(config)
        ids = torch.zeros(1, 1, dtype=torch.long)
    lines: dict[str, TapLine] = {}

    def record(name: str, value: Tensor) -> None:
        lines.setdefault(layer_free(name), offering_line())

    model(ids, ids, return_attention=True, tap=record)
    return lines
