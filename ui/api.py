"""The REST / gradio_client API: /translate, /explain (any German text, paragraphs too), /trace and
/ablate.

A `prefix` (English text) forces the start of the translation of one sentence; decoding goes on
freely after it. /trace returns how one sentence was decoded, step by step (lens/trace.py); /ablate
translates one sentence with chosen attention heads switched off (lens/ablate.py).
"""

from __future__ import annotations

import math

import gradio as gr

from lens.ablate import ablate as ablate_heads
from lens.explain import explain_text, sentences_of, translate_text
from lens.trace import trace
from model import Translator

from .heads_data import first_sentence, head_mask_from
from .runtime import decoding_options, friendly_errors, gpu
from .step import one_sentence

MAX_PREFIX_CHARACTERS = 300
MAX_TOP_K = 50


def checked_prefix(prefix) -> str | None:
    """The API's prefix: English text of at most MAX_PREFIX_CHARACTERS; empty means none."""
    if prefix is None:
        return None
    if not isinstance(prefix, str):
        raise ValueError(f"prefix must be English text, got {type(prefix).__name__}")
    if len(prefix) > MAX_PREFIX_CHARACTERS:
        raise ValueError(f"prefix has {len(prefix):,} characters; at most {MAX_PREFIX_CHARACTERS} are allowed")
    return prefix.strip() or None


def checked_top_k(top_k) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, (int, float)) or not math.isfinite(top_k) \
            or top_k != int(top_k) or not 1 <= top_k <= MAX_TOP_K:
        raise ValueError(f"top_k must be a whole number between 1 and {MAX_TOP_K}, got {top_k!r}")
    return int(top_k)


def prefixed_sentence(text: str) -> str:
    """A prefix starts one translation: the text must be one sentence."""
    sentences, left_out = sentences_of(text)
    if len(sentences) + left_out != 1:
        raise ValueError(f"a prefix applies to one sentence; this text has {len(sentences) + left_out}: send them "
                         "one at a time")
    return sentences[0]


def build(translator: Translator) -> None:
    """Register the endpoints on the Blocks being built."""
    max_len = translator.config.max_len

    def checked(text, decoding, num_beams, length_penalty, max_length):
        if not isinstance(text, str) or not text.strip():
            raise gr.Error("Please enter some German text to translate.")
        return decoding_options(decoding, num_beams, length_penalty, max_length, max_len)

    @gpu
    def run_translate(text, options, prefix):
        if prefix is None:
            return translate_text(translator, text, options)
        return translator.translate(prefixed_sentence(text), **options.to_dict(), prefix=prefix)

    @gpu
    def run_explain(text, options, prefix):
        if prefix is None:
            result = explain_text(translator, text, options)
            sentences = [{"source": s.source, **s.explanation.to_dict()} for s in result.sentences]
            return sentences, result.translation, result.left_out
        sentence = prefixed_sentence(text)
        explanation = translator.explain(sentence, **options.to_dict(), prefix=prefix)
        return [{"source": sentence, **explanation.to_dict()}], explanation.translation, 0

    @gpu
    def run_trace(text, options, top_k, prefix):
        result = trace(translator, text, num_beams=options.num_beams, length_penalty=options.length_penalty,
                       top_k=top_k, max_new_tokens=options.max_new_tokens, prefix=prefix)
        return {"source": text, **result.to_dict()}

    @friendly_errors
    def translate(text: str, decoding: str = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                  max_length: int = 128, prefix: str = "") -> str:
        """German text (one sentence or several) -> English text. decoding: "beam search" or "greedy";
        num_beams 1-8; length_penalty 0-3; max_length: most pieces per translated sentence;
        prefix: English words the translation must start with (one sentence only), then it goes on freely."""
        options = checked(text, decoding, num_beams, length_penalty, max_length)
        return run_translate(text, options, checked_prefix(prefix))

    @friendly_errors
    def explain(text: str, decoding: str = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                max_length: int = 128, prefix: str = "") -> dict:
        """German text -> its translation and, per sentence, tokens, per-token probabilities and every
        attention map (lists [layers][heads][rows][cols]). The first sentence's fields are also at the top.
        prefix: as in /translate."""
        options = checked(text, decoding, num_beams, length_penalty, max_length)
        sentences, translation, left_out = run_explain(text, options, checked_prefix(prefix))
        return {**sentences[0], "translation": translation, "sentences": sentences, "left_out": left_out}

    @friendly_errors
    def trace_sentence(text: str, decoding: str = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                       max_length: int = 128, top_k: int = 10, prefix: str = "") -> dict:
        """One German sentence -> how it was decoded: per step the chosen piece, its probability, the top_k
        candidates, the entropy (nats) and the cross/decoder attention rows [layers][heads][cols]; with
        beam search the tree of hypotheses ("beam") and the ranked finished ones ("nbest")."""
        options = checked(text, decoding, num_beams, length_penalty, max_length)
        return run_trace(one_sentence(text), options, checked_top_k(top_k), checked_prefix(prefix))

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
    gr.api(trace_sentence, api_name="trace")
    gr.api(ablate, api_name="ablate")
