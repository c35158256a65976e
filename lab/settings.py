"""What one lab run is: the task, the model's size, the training, and the switches that build it differently from
the paper. The page's trainer takes the same fields (ui/static/trainer.js `labSettings`) under the same BOUNDS."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from .tasks import TASKS

# Inclusive bounds, each with its reason: one run must train in the visitor's browser in well under a minute.
BOUNDS = {
    "n_layers": (1, 6, "six layers is the paper's depth; more would take minutes in a browser"),
    "n_heads": (1, 8, "eight heads is the paper's count"),
    "d_model": (8, 64, "a toy task needs no more than 64 numbers a piece, and more is slower in a browser"),
    "steps": (10, 1000, "a thousand steps is about a minute in a browser"),
    "lr": (1e-5, 1.0, "beyond 1 every run diverges at once"),
    "warmup": (1, 1000, "the warm-up cannot outlast the run's longest length"),
    "smoothing": (0.0, 0.5, "more smoothing than 0.5 teaches the model to be unsure"),
    "seed": (0, 2**31 - 1, "a 32-bit seed"),
}
# Each switch and its values; the first is the paper's.
SWITCHES = {
    "task": TASKS,
    "norm": ("post", "pre", "none"),
    "causal": (True, False),
    "scale": (True, False),
    "positions": ("sinusoidal", "learned", "none"),
    "embed_scale": (True, False),
    "tied": (True, False),
    "split": ("transpose", "view"),
    "residual": (True, False),
    "cross": ("paper", "swapped"),
    "schedule": ("warmup", "constant"),
}


@dataclass(frozen=True)
class LabSettings:
    """One run. The defaults are the paper's Transformer, shrunk to a toy task."""

    task: str = "copy"
    n_layers: int = 1
    n_heads: int = 4
    d_model: int = 32
    steps: int = 300
    lr: float = 1e-2
    warmup: int = 75
    smoothing: float = 0.1
    seed: int = 0
    norm: str = "post"
    causal: bool = True
    scale: bool = True
    positions: str = "sinusoidal"
    embed_scale: bool = True
    tied: bool = True
    split: str = "transpose"
    residual: bool = True
    cross: str = "paper"
    schedule: str = "warmup"

    def validate(self) -> LabSettings:
        for name, (low, high, why) in BOUNDS.items():
            value = getattr(self, name)
            whole = name not in ("lr", "smoothing")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int)):
                raise ValueError(f"{name} must be a {'whole ' if whole else ''}number, got {value!r}")
            if not (math.isfinite(value) and low <= value <= high):
                raise ValueError(f"{name} must be from {low} to {high} ({why}), got {value!r}")
        for name, values in SWITCHES.items():
            if getattr(self, name) not in values or type(getattr(self, name)) is not type(values[0]):
                raise ValueError(f"{name} must be one of {', '.join(map(str, values))}, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 1:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.d_model % 2:
            raise ValueError(
                f"d_model must be even (the positional encoding pairs sines and cosines), got {self.d_model}"
            )
        return self

    def changed(self, **switches: Any) -> LabSettings:
        return replace(self, **switches).validate()

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, object]) -> LabSettings:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown setting {unknown[0]!r}; the settings are {', '.join(sorted(known))}")
        return cls(**values).validate()  # type: ignore[arg-type]
