"""The REST / gradio_client / MCP API: /translate and /explain, for any German text (paragraphs too).

Every argument is checked before the GPU is asked for (text length and sentences, finite numbers
in range); the docstrings' Args sections become the MCP tools' parameter descriptions.
"""

from __future__ import annotations

from typing import Literal

import gradio as gr

from lens.explain import explain_text, translate_text
from model import Translator

from .runtime import checked_text, decoding_options, friendly_errors, gpu

Decoding = Literal["beam search", "greedy"]


def build(translator: Translator) -> None:
    """Register the endpoints on the Blocks being built."""
    max_len = translator.config.max_len

    @gpu(duration=20)
    def run_translate(text, options):
        return translate_text(translator, text, options)

    @gpu(duration=30)
    def run_explain(text, options):
        return explain_text(translator, text, options)

    @friendly_errors
    def translate(text: str, decoding: Decoding = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                  max_length: int = 128) -> str:
        """Translate German text (one sentence or a paragraph of up to 16 sentences) into English.

        Args:
            text: German text, at most 5,000 characters and 16 sentences; each sentence is translated on its own.
            decoding: "beam search" (keeps num_beams candidates, usually better) or "greedy" (one candidate).
            num_beams: beams for beam search, a whole number from 1 to 8 (ignored by greedy).
            length_penalty: 0 to 3; above 1 favours longer translations (beam search only).
            max_length: most subword pieces per translated sentence, 1 to the model's max_len (256 here).
        Returns:
            The English translation, the sentences joined by spaces.
        """
        text = checked_text(text)
        return run_translate(text, decoding_options(decoding, num_beams, length_penalty, max_length, max_len))

    @friendly_errors
    def explain(text: str, decoding: Decoding = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                max_length: int = 128) -> dict:
        """Translate German text into English and return every attention map behind the translation.

        Args:
            text: German text, at most 5,000 characters and 16 sentences; each sentence is translated on its own.
            decoding: "beam search" (keeps num_beams candidates, usually better) or "greedy" (one candidate).
            num_beams: beams for beam search, a whole number from 1 to 8 (ignored by greedy).
            length_penalty: 0 to 3; above 1 favours longer translations (beam search only).
            max_length: most subword pieces per translated sentence, 1 to the model's max_len (256 here).
        Returns:
            A dict: translation; sentences, one per German sentence, each with source, translation, source_tokens,
            target_tokens, decoder_input_tokens, target_probs and the maps encoder, decoder, cross as nested lists
            [layers][heads][rows][cols] (rows attend to columns); the first sentence's fields also at the top.
        """
        text = checked_text(text)
        result = run_explain(text, decoding_options(decoding, num_beams, length_penalty, max_length, max_len))
        sentences = [{"source": s.source, **s.explanation.to_dict()} for s in result.sentences]
        return {**sentences[0], "translation": result.translation, "sentences": sentences,
                "left_out": result.left_out}

    gr.api(translate, api_name="translate")
    gr.api(explain, api_name="explain")
