"""The map builder: a translation with every attention map of the teacher-forced pass over it, the one place the
maps are built (every view, the API and the notebook read them from here).

Shape legend: L layers, H heads, S source tokens, T target tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from model.heads import HeadMask
from tokenizer import token_strings
from translation.translator import Translator, padded

SHARED_LEVELS = 4  # up to this many decimals, weights in [0, 1] share one float object per value


def rounded_lists(values: np.ndarray, decimals: int) -> list:
    """Nested lists of `values` rounded to `decimals` places, as np.round(...).tolist() gives them. Weights in [0, 1]
    with at most SHARED_LEVELS decimals take one shared float per value (1,001 at 3 decimals), so a 2.4-million
    weight answer holds 8 bytes a weight (the list's pointer) instead of 32."""
    values = np.asarray(values, dtype=np.float64)
    if (
        decimals > SHARED_LEVELS
        or values.size == 0
        or not np.isfinite(values).all()
        or values.min() < 0
        or values.max() > 1
    ):
        return np.round(values, decimals).tolist()
    scale = 10**decimals
    table = np.array([i / scale for i in range(scale + 1)], dtype=object)
    return table[np.rint(values * scale).astype(np.int64)].tolist()


@dataclass
class Explanation:
    """A translation with the attention maps of the teacher-forced pass over it.

    Rows of `decoder` and `cross` are the steps that produced target_tokens[i]; the columns of
    `decoder` are the tokens the decoder read at those steps (decoder_input_tokens).
    """

    translation: str
    source_tokens: list[str]  # S, ending in </s>
    target_tokens: list[str]  # T, the generated tokens, ending in </s> when the model finished
    decoder_input_tokens: list[str]  # T: <s> followed by target_tokens[:-1]
    encoder: np.ndarray  # (L, H, S, S)
    decoder: np.ndarray  # (L, H, T, T)
    cross: np.ndarray  # (L, H, T, S)
    truncated: bool = False  # the source was longer than the model's max_len and was cut
    # (T,) the probability the model gave each target token in the teacher-forced pass (softmax of
    # that step's logits, before any ban or length penalty of the search)
    target_probs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))

    def to_dict(self, decimals: int = 5) -> dict:
        """JSON-ready: lists instead of arrays, weights rounded to `decimals` places."""

        def rounded(maps: np.ndarray) -> list:
            return rounded_lists(maps, decimals)

        return {
            "translation": self.translation,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "decoder_input_tokens": self.decoder_input_tokens,
            "encoder": rounded(self.encoder),
            "decoder": rounded(self.decoder),
            "cross": rounded(self.cross),
            "truncated": self.truncated,
            "target_probs": rounded(self.target_probs),
        }


@torch.inference_mode()
def explain(
    translator: Translator,
    text: str,
    num_beams: int = 4,
    length_penalty: float = 1.0,
    max_new_tokens: int | None = None,
    prefix: str | Sequence[int] | None = None,
    head_mask: HeadMask | None = None,
) -> Explanation:
    """Translate, then run one teacher-forced pass over the translation to read every map.

    `prefix` and `head_mask` as in `Translator.translate`; the maps are those of the masked model.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected text, got {type(text).__name__}")
    prefix_ids = translator.encode_prefix(prefix)
    if not text.strip():
        return empty_explanation(translator)
    src_ids, truncated = translator.encode_source(text)
    out_ids = [
        i
        for i in translator.generate_ids([src_ids], num_beams, length_penalty, max_new_tokens, prefix_ids, head_mask)[0]
        if i != translator.config.pad_id
    ]
    return teacher_forced(translator, src_ids, out_ids, head_mask, truncated)


def teacher_forced(
    translator: Translator,
    src_ids: list[int],
    out_ids: list[int],
    head_mask: HeadMask | None = None,
    truncated: bool = False,
) -> Explanation:
    """The maps and target probabilities of one teacher-forced pass producing out_ids from src_ids."""
    return teacher_forced_batch(translator, [src_ids], [out_ids], head_mask, [truncated])[0]


@torch.inference_mode()
def teacher_forced_batch(
    translator: Translator,
    sources: list[list[int]],
    outputs: list[list[int]],
    head_mask: HeadMask | None = None,
    truncated: list[bool] | None = None,
) -> list[Explanation]:
    """`teacher_forced` for many sentences in one padded pass. Padding is masked, so each sentence's maps equal
    those of its pass alone."""
    config, tokenizer = translator.config, translator.tokenizer
    # The decoder reads BOS + all but the last output and predicts each output at its step.
    inputs = [[config.bos_id] + out[:-1] for out in outputs]
    src, tgt, written = (padded(rows, config.pad_id, translator.device) for rows in (sources, inputs, outputs))
    logits, maps = translator.model(src, tgt, return_attention=True, head_mask=head_mask)  # (B, T, V)
    # before any ban or penalty of the search
    probs = logits.float().softmax(dim=-1).gather(-1, written[..., None])[..., 0]  # (B, T)

    def stack(layers: list[torch.Tensor], row: int, rows: int, cols: int) -> np.ndarray:
        return torch.stack([m[row, :, :rows, :cols] for m in layers]).float().cpu().numpy()  # (L, H, rows, cols)

    explanations = []
    for b, (src_ids, out_ids, tgt_in) in enumerate(zip(sources, outputs, inputs)):
        S, T = len(src_ids), len(out_ids)
        explanations.append(
            Explanation(
                translation=translator.decode(out_ids),
                source_tokens=token_strings(tokenizer, src_ids),
                target_tokens=token_strings(tokenizer, out_ids),
                decoder_input_tokens=token_strings(tokenizer, tgt_in),
                encoder=stack(maps.encoder, b, S, S),
                decoder=stack(maps.decoder, b, T, T),
                cross=stack(maps.cross, b, T, S),
                truncated=bool(truncated[b]) if truncated else False,
                target_probs=probs[b, :T].cpu().numpy().astype(np.float32),
            )
        )
    return explanations


def empty_explanation(translator: Translator) -> Explanation:
    """The explanation of an empty text: no tokens, maps of every layer with no rows."""
    H, n_enc, n_dec = translator.config.n_heads, translator.config.n_encoder_layers, translator.config.n_decoder_layers
    return Explanation(
        "",
        [],
        [],
        [],
        np.zeros((n_enc, H, 0, 0), np.float32),
        np.zeros((n_dec, H, 0, 0), np.float32),
        np.zeros((n_dec, H, 0, 0), np.float32),
        target_probs=np.zeros(0, np.float32),
    )
