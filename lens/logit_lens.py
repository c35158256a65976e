"""When was each English word decided? The decoder's state after every sublayer, read as a prediction.

The "logit lens" (nostalgebraist 2020; the LLM Transparency Tool) projects an intermediate state onto
the vocabulary with the model's own final LayerNorm and output layer. Here the stages are the
embedding and, for every decoder layer, the state after its self-attention, its cross-attention and
its feed-forward sublayer; at each stage and step: the top candidates and the probability of the word
the model finally wrote. The last stage is the model's own output. Early stages are rough: the final
LayerNorm and output layer were trained to read the last state only.

Shape legend: T target steps, D model width, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from tokenizer import token_strings
from translation.translator import Translator

from .explain import DecodingOptions, decode_one
from .stream import read, stages

TOP = 5


@dataclass
class LogitLens:
    stages: list[str]  # "embedding", "layer 1 self-attention", ...
    target_tokens: list[str]  # the words written, one per step
    prob: list[list[float]]  # [stage][step]: the probability of the word finally written
    top: list[list[list[dict]]]  # [stage][step]: the TOP candidates, {"token", "prob"}
    decided_at: list[int]  # per step, the first stage (from 0) from which the written word is the favourite

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def decoder_states(model, src: torch.Tensor, tgt: torch.Tensor) -> tuple[list[str], list[torch.Tensor]]:
    """The names of the stages and the decoder's state (1, T, D) after each: the embedding, then every sublayer."""
    labelled = stages(model.config, "decoder")
    seen, _ = read(model, src, tgt, [name for _, name in labelled])
    return [label for label, _ in labelled], [seen[name] for _, name in labelled]


@torch.inference_mode()
def logit_lens(translator: Translator, text: str, options: DecodingOptions | None = None, prefix=None) -> LogitLens:
    """Translate one sentence (starting with `prefix`, English text or ids, when given: a forced word), then
    read every stage of the decoder as a distribution over the vocabulary."""
    sentence = decode_one(translator, text, options, prefix=prefix)  # the translation alone: no maps are read here
    model, device = translator.model, translator.device
    src = torch.tensor([sentence.source_ids], device=device)  # (1, S)
    tgt = torch.tensor([sentence.input_ids], device=device)  # (1, T)
    written = torch.tensor(sentence.output_ids, device=device)  # (T,)
    names, states = decoder_states(model, src, tgt)
    stacked = model.decoder_norm(torch.cat(states))  # (stages, T, D): one projection for every stage
    probs = model.lm_head(stacked).float().softmax(-1)  # (stages, T, V)
    chosen = probs.gather(-1, written.view(1, -1, 1).expand(len(states), -1, 1))[..., 0]  # (stages, T)
    values, ids = probs.topk(TOP, dim=-1)  # (stages, T, TOP)
    names_of = iter(token_strings(translator.tokenizer, ids.flatten().tolist()))
    p_of = iter(values.flatten().tolist())
    top = [
        [[{"token": next(names_of), "prob": round(next(p_of), 4)} for _ in range(TOP)] for _ in range(ids.size(1))]
        for _ in range(len(states))
    ]
    favourite = ids[..., 0] == written  # (stages, T)
    decided = [
        next((s for s in range(len(states)) if favourite[s:, t].all()), len(states) - 1) for t in range(written.size(0))
    ]
    return LogitLens(names, token_strings(translator.tokenizer, sentence.output_ids), chosen.tolist(), top, decided)
