"""Head masks: run the model with any set of attention heads switched off.

A switched-off head's output is zeroed before the output projection W_O, so the layer sums
only the other heads; its attention weights are still computed and returned. Shape legend:
H heads; one row per layer of each attention kind.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor

from .config import TransformerConfig

KINDS = ("encoder", "decoder", "cross")


@dataclass
class HeadMask:
    """1.0 keeps a head, 0.0 switches it off; one row per layer of each attention kind."""

    encoder: Tensor  # (n_encoder_layers, H): encoder self-attention
    decoder: Tensor  # (n_decoder_layers, H): decoder self-attention
    cross: Tensor  # (n_decoder_layers, H): decoder cross-attention to the source

    @classmethod
    def all_on(cls, config: TransformerConfig) -> HeadMask:
        """Every head on: the model as trained."""
        H = config.n_heads
        return cls(
            encoder=torch.ones(config.n_encoder_layers, H),
            decoder=torch.ones(config.n_decoder_layers, H),
            cross=torch.ones(config.n_decoder_layers, H),
        )

    def _rows(self, kind: str, layer: int, head: int) -> Tensor:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        rows = getattr(self, kind)
        n_layers, n_heads = rows.shape
        if not (isinstance(layer, int) and 0 <= layer < n_layers):
            raise ValueError(f"{kind} layer must be an integer in [0, {n_layers}), got {layer!r}")
        if not (isinstance(head, int) and 0 <= head < n_heads):
            raise ValueError(f"head must be an integer in [0, {n_heads}), got {head!r}")
        return rows.clone()

    def switched_off(self, kind: str, layer: int, head: int) -> HeadMask:
        """A copy with head `head` of layer `layer` of `kind` switched off (0-based)."""
        rows = self._rows(kind, layer, head)
        rows[layer, head] = 0.0
        return replace(self, **{kind: rows})

    def only(self, kind: str, layer: int, head: int) -> HeadMask:
        """A copy in which `head` is the only head left on in that layer of `kind`."""
        rows = self._rows(kind, layer, head)
        rows[layer] = 0.0
        rows[layer, head] = 1.0
        return replace(self, **{kind: rows})

    def to(self, device: torch.device | str, dtype: torch.dtype = torch.float32) -> HeadMask:
        """The same mask on `device` in `dtype` (the model's), so no step converts it again."""
        return HeadMask(**{kind: getattr(self, kind).to(device=device, dtype=dtype) for kind in KINDS})

    def to_dict(self) -> dict[str, list[list[int]]]:
        """JSON-ready: one list of 0/1 per layer of each kind."""
        return {kind: [[int(v != 0) for v in row] for row in getattr(self, kind).tolist()] for kind in KINDS}

    @classmethod
    def from_dict(cls, d: dict, config: TransformerConfig) -> HeadMask:
        """Read `to_dict`'s lists back, checking every kind has the config's layers x heads of 0/1."""
        if not isinstance(d, dict) or set(d) != set(KINDS):
            got = sorted(d) if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"a head mask needs exactly the keys {list(KINDS)}, got {got}")
        shapes = {
            "encoder": config.n_encoder_layers,
            "decoder": config.n_decoder_layers,
            "cross": config.n_decoder_layers,
        }
        rows = {}
        for kind, n_layers in shapes.items():
            values = d[kind]
            ok = (
                isinstance(values, list)
                and len(values) == n_layers
                and all(
                    isinstance(r, list) and len(r) == config.n_heads and all(v in (0, 1) for v in r) for r in values
                )
            )
            if not ok:
                raise ValueError(f"head mask {kind!r} must be {n_layers} lists of {config.n_heads} values 0 or 1")
            rows[kind] = torch.tensor(values, dtype=torch.float32)
        return cls(**rows)

    def check(self, config: TransformerConfig) -> None:
        """Raise a clear error unless the mask has the model's layers x heads."""
        shapes = {
            "encoder": config.n_encoder_layers,
            "decoder": config.n_decoder_layers,
            "cross": config.n_decoder_layers,
        }
        for kind, n_layers in shapes.items():
            shape = tuple(getattr(self, kind).shape)
            if shape != (n_layers, config.n_heads):
                raise ValueError(f"head_mask.{kind} has shape {shape}, the model needs ({n_layers}, {config.n_heads})")
