"""Every name the model offers to a tap (model/taps.py) for a config, like TransformerLens's `hook_dict`.

The names are read off the forward pass itself, not written down a second time: a model built from
the config on the meta device (shapes only: no memory, no arithmetic) runs once with a tap that
records what it is offered, so a tap added to or removed from the layers shows up here by itself.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .config import TransformerConfig
from .transformer import Transformer


def tap_names(config: TransformerConfig) -> list[str]:
    """The names `Transformer.forward` offers with the attention maps asked for, in the order it offers them.

    Without the maps (the fused attention kernel) the same names less every `.scores` and `.weights`.
    """
    with torch.device("meta"):
        model = Transformer(config)
        ids = torch.zeros(1, 1, dtype=torch.long)  # (B, S) = (B, T) = (1, 1): the names do not depend on lengths
    names: list[str] = []

    def record(name: str, value: Tensor) -> None:
        names.append(name)

    model(ids, ids, return_attention=True, tap=record)
    return names
