"""The REST / gradio_client API: /translate and /explain, for any German text (paragraphs too), and
/ablate: one sentence translated with chosen attention heads switched off."""

from __future__ import annotations

import gradio as gr

from lens.ablate import ablate as ablate_heads
from lens.explain import explain_text, translate_text
from model import Translator

from .heads_data import first_sentence, head_mask_from
from .runtime import decoding_options, friendly_errors, gpu


def build(translator: Translator) -> None:
    """Register the endpoints on the Blocks being built."""
    max_len = translator.config.max_len

    def checked(text, decoding, num_beams, length_penalty, max_length):
        if not isinstance(text, str) or not text.strip():
            raise gr.Error("Please enter some German text to translate.")
        return decoding_options(decoding, num_beams, length_penalty, max_length, max_len)

    @gpu
    def run_translate(text, options):
        return translate_text(translator, text, options)

    @gpu
    def run_explain(text, options):
        return explain_text(translator, text, options)

    @friendly_errors
    def translate(text: str, decoding: str = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                  max_length: int = 128) -> str:
        """German text (one sentence or several) -> English text. decoding: "beam search" or "greedy";
        num_beams 1-8; length_penalty 0-3; max_length: most pieces per translated sentence."""
        return run_translate(text, checked(text, decoding, num_beams, length_penalty, max_length))

    @friendly_errors
    def explain(text: str, decoding: str = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                max_length: int = 128) -> dict:
        """German text -> its translation and, per sentence, tokens, per-token probabilities and every
        attention map (lists [layers][heads][rows][cols]). The first sentence's fields are also at the top."""
        result = run_explain(text, checked(text, decoding, num_beams, length_penalty, max_length))
        sentences = [{"source": s.source, **s.explanation.to_dict()} for s in result.sentences]
        return {**sentences[0], "translation": result.translation, "sentences": sentences,
                "left_out": result.left_out}

    @gpu
    def run_ablate(sentence, mask, options):
        return ablate_heads(translator, sentence, mask, **options.to_dict())

    @friendly_errors
    def ablate(text: str, heads: list | dict | str = "[]", decoding: str = "beam search", num_beams: int = 4,
               length_penalty: float = 1.0, max_length: int = 128) -> dict:
        """One German sentence translated with every head on and with `heads` switched off.
        heads: a list like ["cross:2:1", "encoder:1:*"] (kind:layer:head, counted from 1 as on the page,
        '*' for all; kind encoder, decoder or cross), or a head mask {"encoder": [[1, 0, ...], ...],
        "decoder": ..., "cross": ...} with 1 = on, 0 = off; either may be sent as JSON text. Returns both
        translations, the changed words, the heads switched off (0-based) and the ablated model's maps."""
        options = checked(text, decoding, num_beams, length_penalty, max_length)
        sentence, left_out = first_sentence(text)
        mask = head_mask_from(heads, translator.config)
        return {**run_ablate(sentence, mask, options).to_dict(), "left_out": left_out}

    gr.api(translate, api_name="translate")
    gr.api(explain, api_name="explain")
    gr.api(ablate, api_name="ablate")
