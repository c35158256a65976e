"""Activation patching: where in the encoder the information that chose a word sits.

Two German sentences of the same number of pieces, a clean one and a corrupted one (one word
swapped: "Ein Hund rennt." / "Eine Katze rennt."). At one step of the clean translation, with the
clean English before it, the model prefers the clean word y; with the corrupted German it prefers
another, y'. The difference d = logit(y) - logit(y') measures that choice. Then, for every encoder
level (the embeddings, the output of each layer) and every German position, the corrupted run is
repeated with that one vector taken from the clean run, and

    recovered[level][position] = (d_patched - d_corrupted) / (d_clean - d_corrupted)

is the share of the choice that this one vector carries back: 1 restores the clean choice, 0
changes nothing (as TransformerLens's activation patching, here on the encoder's residual stream
of an encoder-decoder).

The same is done for every attention head (lens/patching_heads.py): its output, before W_O, copied from the
clean run into the corrupted one, gives `restored[kind][layer][head]`; patching every head restores
the clean choice (`all`, 1) and patching none changes nothing (`none`, 0), both computed. Without a step,
the step is the first where the two translations differ. Every patched run goes in one batch; no hooks
on the shared model.

Shape legend: S source tokens, D model width, R patched runs ((L + 1) x S), L encoder layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.attention import padding_mask
from tokenizer import token_strings
from translation.translator import Translator

from . import cost
from .cost import checked_whole, is_whole
from .explain import DecodingOptions, decode_one
from .patching_heads import head_patching
from .stream import encoder_from, encoder_levels, read


@dataclass
class Patching:
    step: int
    clean_piece: str  # y, written by the clean run at `step`
    corrupted_piece: str  # y', the corrupted run's favourite at the same step
    clean_diff: float  # logit(y) - logit(y') with the clean German
    corrupted_diff: float  # the same with the corrupted German
    levels: list[str]  # "embedding", "layer 1", ...
    source_tokens: list[str]  # the clean German's pieces
    corrupted_tokens: list[str]
    recovered: list[list[float]]  # [level][position]
    restored: dict[str, list[list[float]]]  # kind -> [layer][head]: that head's output patched
    all: float  # every head patched: 1 (computed)
    none: float  # nothing patched: 0 (computed)
    top_heads: list[dict]  # the heads that restore most, {"kind", "layer", "head" (from 1), "restored"}
    clean_translation: str
    corrupted_translation: str

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def encoder_states(model, src: torch.Tensor, head_mask=None) -> list[torch.Tensor]:
    """The residual stream of the encoder at every level: the embeddings, then each layer's output, (1, S, D) each."""
    levels = encoder_levels(model.config)
    seen, _ = read(model, src, None, [name for _, name in levels], head_mask)
    return [seen[name] for _, name in levels]


def patched_diffs(
    model, src: torch.Tensor, clean: list[torch.Tensor], prefix: torch.Tensor, y: int, y_other: int, head_mask=None
) -> torch.Tensor:
    """d for each (level, position) patched run of the corrupted `src` (1, S): (L + 1, S).

    The runs go through the model `cost.rows_per_chunk` at a time, so memory stays bounded whatever S is."""
    S, levels = src.size(1), encoder_levels(model.config)
    corrupted = encoder_states(model, src, head_mask)
    per_run = cost.run_cells(model.config, S, prefix.size(1))
    diffs = torch.empty(len(levels), S)
    for level in range(len(levels)):
        for positions in torch.arange(S).split(cost.rows_per_chunk(per_run)):
            x = corrupted[level].expand(len(positions), -1, -1).clone()  # (r, S, D)
            x[torch.arange(len(positions)), positions] = clean[level][0, positions]
            diffs[level, positions] = patched_run(model, src, level, x, prefix, head_mask, y, y_other)
    return diffs


def patched_run(
    model, src: torch.Tensor, level: int, x: torch.Tensor, prefix: torch.Tensor, head_mask, y: int, y_other: int
) -> torch.Tensor:
    """The model on `src` with the r streams x (r, S, D) in the encoder's stream at `level`, the decoder after
    `prefix`: d per run (r,). The layers below `level` are not run again (their stream is x)."""
    r, src = x.size(0), src.expand(x.size(0), -1)
    memory = encoder_from(model, src, level, x, head_mask)
    hidden, _, _ = model.decode(
        prefix.expand(r, -1), memory, padding_mask(src, model.config.pad_id), head_mask=head_mask
    )
    last = model.lm_head(hidden[:, -1]).float()  # (r, V)
    return (last[:, y] - last[:, y_other]).cpu()


def last_logits(model, src: torch.Tensor, prefix: torch.Tensor, head_mask=None) -> torch.Tensor:
    """The logits of the next piece after `prefix` (1, t) for the German `src` (1, S): (V,)."""
    return model(src, prefix, head_mask=head_mask)[0, -1].float()


def checked_pair(translator: Translator, clean: str, corrupted: str, step=None) -> tuple[list[int], list[int]]:
    """The two sentences' ids, refused in words where they cannot be patched; `step`'s range is checked first, before
    any budget (a step past any translation names `step`, not the work)."""
    if step is not None:
        checked_whole(
            step, "step", 0, translator.config.max_len, " (a piece of the translation, or 0 for the first that differs)"
        )
    clean_ids, _ = translator.encode_source(clean)
    corrupted_ids, _ = translator.encode_source(corrupted)
    if len(clean_ids) != len(corrupted_ids):
        raise ValueError(
            f"the corrupted sentence has {len(corrupted_ids)} pieces and the clean one {len(clean_ids)}: "
            "patching swaps vectors position by position, so swap a word for one of as many pieces"
        )
    if clean_ids == corrupted_ids:
        raise ValueError("the corrupted sentence is the clean one: change a word")
    known = is_whole(step) and step > 0
    check_patch_work(translator.config, len(clean_ids), int(step) if known else 1)  # again once the step is known
    return clean_ids, corrupted_ids


def check_patch_work(config, S: int, t: int) -> None:
    """The patching budget: (L + 1) S encoder runs and 2 + 3 L H head runs, each a replay of S and t pieces."""
    runs = (config.n_encoder_layers + 1) * S + 2 + 3 * config.n_decoder_layers * config.n_heads
    cost.check_work(cost.PATCH_WORK, cost.replay_work(config, runs, S, t))


def checked_step(step, clean_out: list[int], corrupted_out: list[int]) -> int:
    """The step asked for (from 1), or with None the first where the two translations differ."""
    if step is None or step == 0:
        differ = next((i for i, (a, b) in enumerate(zip(clean_out, corrupted_out)) if a != b), None)
        if differ is None:
            raise ValueError("the two sentences translate alike: swap a word that changes the translation")
        return differ + 1
    return checked_whole(
        step, "step", 1, len(clean_out), " (the pieces of the translation), or 0 for the first that differs"
    )


@torch.inference_mode()
def patch(
    translator: Translator,
    clean: str,
    corrupted: str,
    step: int | None = None,
    options: DecodingOptions | None = None,
    head_mask=None,
) -> Patching:
    """Patch every encoder level and position, and every head, of `corrupted` with `clean`'s, at `step`
    (from 1; None or 0: the first step where the translations differ) of clean's translation."""
    clean_ids, corrupted_ids = checked_pair(translator, clean, corrupted, step)
    options = options or DecodingOptions()
    model, device, c = translator.model, translator.device, translator.config
    if head_mask is not None:
        head_mask = model.checked_head_mask(head_mask)
    out, bad_out = (
        decode_one(translator, text, options, head_mask=head_mask).output_ids for text in (clean, corrupted)
    )
    step = checked_step(step, out, bad_out)
    check_patch_work(c, len(clean_ids), step)
    src_clean, src_bad = (torch.tensor([ids], device=device) for ids in (clean_ids, corrupted_ids))
    prefix = torch.tensor([[c.bos_id] + out[: step - 1]], device=device)  # the clean English before the step
    y, bad_logits = out[step - 1], last_logits(model, src_bad, prefix, head_mask)
    y_other = int(bad_logits.argmax())
    if y_other == y:
        raise ValueError(
            f"the corrupted German still gives {translator.decode([y]).strip()!r} at step {step}: "
            "pick a step (or a word) where the two differ"
        )
    clean_logits = last_logits(model, src_clean, prefix, head_mask)
    d_clean, d_bad = float(clean_logits[y] - clean_logits[y_other]), float(bad_logits[y] - bad_logits[y_other])
    diffs = patched_diffs(model, src_bad, encoder_states(model, src_clean, head_mask), prefix, y, y_other, head_mask)
    recovered = ((diffs - d_bad) / (d_clean - d_bad)).tolist()
    heads = head_patching(model, src_clean, src_bad, prefix, y, y_other, d_clean, d_bad, head_mask)
    names = token_strings(translator.tokenizer, [y, y_other])
    return Patching(
        step,
        names[0],
        names[1],
        d_clean,
        d_bad,
        ["embedding"] + [f"layer {i + 1}" for i in range(c.n_encoder_layers)],
        token_strings(translator.tokenizer, clean_ids),
        token_strings(translator.tokenizer, corrupted_ids),
        [[round(v, 4) for v in row] for row in recovered],
        heads.restored,
        heads.all,
        heads.none,
        heads.top(3),
        translator.decode(out),
        translator.decode(bad_out),
    )
