"""Which heads carry a word: every attention head's output patched from a clean run into a corrupted one.

The model is replayed with each attention's per-head output (softmax(QK^T/sqrt(d_k))V, before W_O)
open to substitution: run r takes the heads chosen for it from the clean run, the rest it computes
itself. Run 0 patches nothing, run 1 every head, then one run per (kind, layer, head). With d the logit
difference between the clean word y and the corrupted one y' at the step,

    restored = (d_patched - d_corrupted) / (d_clean - d_corrupted)

is the share of the choice one head brings back (TransformerLens's patching, for an encoder-decoder).
Patching every head makes the decoder's stream the clean one, so `all` is 1; `none` is 0. A head
switched off (`head_mask`) gives 0 in both runs, so patching it restores nothing.

Shape legend: R runs, S source tokens, t prefix tokens, H heads, d_k head width, D model width.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from model.heads import KINDS, HeadMask

from .stream import attention_name, read, replacing

Outputs = dict[str, list[torch.Tensor]]  # kind -> per layer, the heads' outputs (R, H, L, d_k)


@dataclass
class HeadPatching:
    restored: dict[str, list[list[float]]]  # kind -> [layer][head]
    all: float
    none: float

    def top(self, n: int) -> list[dict]:
        """The n heads that restore most, layer and head counted from 1."""
        ranked = sorted(
            (
                (value, kind, layer, head)
                for kind, grid in self.restored.items()
                for layer, row in enumerate(grid)
                for head, value in enumerate(row)
            ),
            reverse=True,
        )
        return [
            {"kind": kind, "layer": layer + 1, "head": head + 1, "restored": value}
            for value, kind, layer, head in ranked[:n]
        ]


def replay(
    model, src, prefix, head_mask: HeadMask | None = None, chosen: dict | None = None, clean: Outputs | None = None
) -> tuple[torch.Tensor, Outputs]:
    """The model on src (R, S) and prefix (R, t), heads patched where `chosen[kind]` (R, layers, H) says:
    the logits of the next piece (R, V) and every head's output."""
    names = {
        kind: [attention_name(kind, i) + ".heads" for i in range(layers)]
        for kind, layers in layer_counts(model.config).items()
    }
    patches: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {}
    if chosen is not None:
        assert clean is not None  # the patched heads' outputs come from the clean run
        for kind, per_layer in names.items():
            for i, name in enumerate(per_layer):
                pick, from_clean = chosen[kind][:, i][:, :, None, None], clean[kind][i]  # (R, H, 1, 1), (1, H, L, d_k)
                patches[name] = patched(pick, from_clean)
    seen, logits = read(
        model,
        src,
        prefix,
        [n for per_layer in names.values() for n in per_layer],
        head_mask,
        replace=replacing(patches),
    )
    assert logits is not None  # read returns logits where a prefix is decoded
    return logits[:, -1].float(), {kind: [seen[name] for name in per_layer] for kind, per_layer in names.items()}


def patched(pick: torch.Tensor, from_clean: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """The heads' output `out` with the clean run's in the heads `pick` marks."""
    return lambda out: torch.where(pick, from_clean, out)


def layer_counts(config) -> dict[str, int]:
    return {"encoder": config.n_encoder_layers, "decoder": config.n_decoder_layers, "cross": config.n_decoder_layers}


def choices(config, device) -> tuple[dict[str, torch.Tensor], list[tuple[str, int, int]]]:
    """Per kind (R, layers, H) booleans: run 0 patches nothing, run 1 everything, then one head a run."""
    H, layers = config.n_heads, layer_counts(config)
    single = [(kind, layer, head) for kind in KINDS for layer in range(layers[kind]) for head in range(H)]
    chosen = {kind: torch.zeros(2 + len(single), n, H, dtype=torch.bool, device=device) for kind, n in layers.items()}
    for kind in KINDS:
        chosen[kind][1] = True
    for r, (kind, layer, head) in enumerate(single, 2):
        chosen[kind][r, layer, head] = True
    return chosen, single


@torch.inference_mode()
def head_patching(
    model,
    src_clean,
    src_bad,
    prefix,
    y: int,
    y_other: int,
    d_clean: float,
    d_bad: float,
    head_mask: HeadMask | None = None,
) -> HeadPatching:
    """Every head of the corrupted run (src_bad (1, S)) patched from the clean one, at the step after `prefix`
    (1, t). d_clean and d_bad come from the model's own forward pass, so `none` and `all` check the replay."""
    if head_mask is not None:
        head_mask = head_mask.to(src_clean.device, model.embed.weight.dtype)
    _, clean = replay(model, src_clean, prefix, head_mask)
    chosen, single = choices(model.config, src_clean.device)
    R = chosen["encoder"].size(0)
    logits, _ = replay(model, src_bad.expand(R, -1), prefix.expand(R, -1), head_mask, chosen, clean)
    d = logits[:, y] - logits[:, y_other]  # (R,)
    restored = ((d - d_bad) / (d_clean - d_bad)).tolist()
    grids = {kind: [[0.0] * model.config.n_heads for _ in range(chosen[kind].size(1))] for kind in KINDS}
    for value, (kind, layer, head) in zip(restored[2:], single):
        grids[kind][layer][head] = round(value, 4)
    return HeadPatching(grids, round(restored[1], 4), round(restored[0], 4))
