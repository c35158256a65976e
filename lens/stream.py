"""The one lens file that knows the order of the model's parts: it reads and replaces the forward pass at its taps.

Every inside view reads the teacher-forced pass through the names of model/taps.py: `read` records
the values it asks for, `replacing` puts values in their place (patching, attribution), and
`attention_blocks` / `stages` list the parts in the order the stream goes through them, so that no
view walks the layers itself.

Shape legend: B batch, S source and T target length, D model width, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch

from model.attention import padding_mask
from model.heads import HeadMask
from model.taps import Tap

ATTENTION = {"encoder": "self_attn", "decoder": "self_attn", "cross": "cross_attn"}  # a map's kind -> its module
STACK = {"encoder": "encoder", "decoder": "decoder", "cross": "decoder"}  # a map's kind -> the stack it is in


def attention_name(kind: str, layer: int) -> str:
    """The tap prefix of the attention that draws the `kind` map of `layer` (from 0): "decoder.1.cross_attn"."""
    return f"{STACK[kind]}.{layer}.{ATTENTION[kind]}"


def attention_module(model, kind: str, layer: int):
    """The MultiHeadAttention behind that map."""
    stack = model.encoder_layers if STACK[kind] == "encoder" else model.decoder_layers
    return getattr(stack[layer], ATTENTION[kind])


def attention_norm(model, kind: str, layer: int):
    """The LayerNorm of that attention's sublayer (norm1 for self-attention, norm2 for cross-attention)."""
    stack = model.encoder_layers if STACK[kind] == "encoder" else model.decoder_layers
    return stack[layer].norm2 if kind == "cross" else stack[layer].norm1


@dataclass
class Block:
    """One attention sublayer of the stream, in order: its kind, layer (from 0), the tap names of the stream
    before and after it, and the name of the stream after the feed-forward sublayer that follows, if one does."""

    kind: str
    layer: int
    before: str
    after: str
    then_ff: str | None


def attention_blocks(config, stack: str) -> list[Block]:
    """The attention sublayers of one stack ("encoder" or "decoder") in the order the stream meets them."""
    blocks, before = [], f"{stack}.embed"
    layers = config.n_encoder_layers if stack == "encoder" else config.n_decoder_layers
    kinds = ("encoder",) if stack == "encoder" else ("decoder", "cross")
    for i in range(layers):
        for n, kind in enumerate(kinds):
            after = f"{attention_name(kind, i)}.resid"
            last = n == len(kinds) - 1
            blocks.append(Block(kind, i, before, after, f"{stack}.{i}.ff.resid" if last else None))
            before = blocks[-1].then_ff or after
    return blocks


def stages(config, stack: str) -> list[tuple[str, str]]:
    """The stream of one stack after each sublayer: (a reader's label, the tap name), from the embedding on."""
    out = [("embedding", f"{stack}.embed")]
    for block in attention_blocks(config, stack):
        label = "self-attention" if block.kind != "cross" else "cross-attention"
        out.append((f"layer {block.layer + 1} {label}", block.after))
        if block.then_ff:
            out.append((f"layer {block.layer + 1} feed-forward", block.then_ff))
    return out


def encoder_levels(config) -> list[tuple[str, str]]:
    """The encoder's stream between its layers: the embedding, then each layer's output."""
    return [("embedding", "encoder.embed")] + [
        (f"layer {i + 1}", f"encoder.{i}.ff.resid") for i in range(config.n_encoder_layers)
    ]


def encoder_from(
    model, src: torch.Tensor, level: int, x: torch.Tensor, head_mask: HeadMask | None = None
) -> torch.Tensor:
    """The encoder's memory when its stream at `level` (encoder_levels: 0 the embedding, i the output of layer i) is
    x (B, S, D): only the layers above it run, so a patched run does not redo the ones below."""
    mask = padding_mask(src, model.config.pad_id)
    for i in range(level, model.config.n_encoder_layers):
        x, _ = model.encoder_layers[i](x, mask, heads=None if head_mask is None else head_mask.encoder[i])
    return model.encoder_norm(x)


def read(
    model,
    src: torch.Tensor,
    tgt: torch.Tensor | None,
    names: Iterable[str],
    head_mask: HeadMask | None = None,
    need_weights: bool = False,
    replace: Tap | None = None,
) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
    """The values at `names` of the teacher-forced pass over src (B, S) and tgt (B, T) (None: the encoder alone),
    and the logits (B, T, V) or None; `replace` may put other values in place on the way."""
    wanted, seen = set(names), {}

    def tap(name: str, value: torch.Tensor):
        if replace is not None:
            replaced = replace(name, value)
            value = value if replaced is None else replaced
        if name in wanted:
            seen[name] = value
        return value

    if tgt is None:
        model.encode(src, padding_mask(src, model.config.pad_id), need_weights, head_mask, tap)
        return seen, None
    logits = model(src, tgt, return_attention=need_weights, head_mask=head_mask, tap=tap)
    return seen, logits[0] if need_weights else logits


def replacing(values: Mapping[str, torch.Tensor | Callable[[torch.Tensor], torch.Tensor]]) -> Tap:
    """A tap that puts values[name] in the place of `name` (a tensor, or a function of the value there)."""

    def tap(name: str, value: torch.Tensor):
        new = values.get(name)
        return new(value) if callable(new) else new

    return tap


def standing_in(token_embedding: torch.Tensor) -> Tap:
    """A tap that puts `token_embedding` (B, S, D) in the place of the source's token embedding."""
    return replacing({"encoder.tokens": token_embedding})
