"""Any German text -> its sentences, translated as one batch, each with every attention map.

The model learned from single sentences, so a paragraph is split first (tokenizer/sentences.py);
the sentences are decoded together, then one teacher-forced pass over the batch reads the maps.

Shape legend: B sentences, L layers, H heads, S source tokens, T target tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from tokenizer.chinese import HAN
from tokenizer.sentences import split_sentences
from translation.translator import Translator

from .cost import EXPLAIN, Budget, check_after, check_before
from .maps import Explanation, teacher_forced_batch

MAX_CHARACTERS = 5_000  # a few paragraphs; longer texts are refused before any work
MAX_SENTENCES = 16  # past this, the rest of the text is left out (and the page says so)


BEAMS = (1, 8)  # num_beams, the sliders and the API docs read these bounds
LENGTH_PENALTY = (0.0, 3.0)


@dataclass
class DecodingOptions:
    """What the user chose for decoding, checked: finite numbers in the ranges the model handles."""

    num_beams: int = 4
    length_penalty: float = 1.0
    max_new_tokens: int = 128

    @classmethod
    def checked(cls, num_beams, length_penalty, max_new_tokens, max_len: int) -> DecodingOptions:
        """Refuse (ValueError naming the argument) anything that is not a finite number in range."""
        values = {}
        for name, value, low, high in (
            ("num_beams", num_beams, *BEAMS),
            ("length_penalty", length_penalty, *LENGTH_PENALTY),
            ("max_length", max_new_tokens, 1, max_len),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number between {low} and {high}, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low} and {high}, got {value!r}")
            if name != "length_penalty" and value != int(value):
                raise ValueError(f"{name} must be a whole number between {low} and {high}, got {value!r}")
            values[name] = value
        return cls(int(values["num_beams"]), float(values["length_penalty"]), int(values["max_length"]))

    def to_dict(self) -> dict:
        return {
            "num_beams": self.num_beams,
            "length_penalty": self.length_penalty,
            "max_new_tokens": self.max_new_tokens,
        }


def method_name(options: DecodingOptions) -> str:
    """The search as a reader names it: "greedy" or "beam search (4 beams)"."""
    return "greedy" if options.num_beams == 1 else f"beam search ({options.num_beams} beams)"


Word = tuple[str, list[int]]  # a word as a reader writes it, and the positions of its pieces
SPECIAL = frozenset({"<s>", "</s>", "<pad>", "<unk>"})


@dataclass
class SentenceExplanation:
    """One sentence: its German text, the explanation, and the words of each token axis."""

    source: str
    explanation: Explanation
    source_words: list[Word]  # grouping source_tokens
    target_words: list[Word]  # grouping target_tokens
    input_words: list[Word]  # grouping decoder_input_tokens
    source_ids: list[int] | None = None  # the ids behind source_tokens (ending in EOS)
    input_ids: list[int] | None = None  # the ids behind decoder_input_tokens (BOS first)
    output_ids: list[int] | None = None  # the ids behind target_tokens (the words written)


@dataclass
class TextExplanation:
    """A text's sentences, their translations and maps, and how many sentences were left out."""

    sentences: list[SentenceExplanation]
    options: DecodingOptions
    left_out: int = 0  # sentences past MAX_SENTENCES, not translated

    @property
    def translation(self) -> str:
        return " ".join(s.explanation.translation for s in self.sentences if s.explanation.translation)


def sentences_of(text: str) -> tuple[list[str], int]:
    """The sentences to translate (at most MAX_SENTENCES) and how many were left out."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_CHARACTERS:
        raise ValueError(
            f"the text has {len(text):,} characters; at most {MAX_CHARACTERS:,} are translated at once: shorten it"
        )
    sentences = split_sentences(text)
    return sentences[:MAX_SENTENCES], max(0, len(sentences) - MAX_SENTENCES)


def translate_text(translator: Translator, text: str, options: DecodingOptions) -> str:
    """German text (any number of sentences) -> English text, the sentences decoded as one batch."""
    sentences, _ = sentences_of(text)
    outputs = translator.translate(sentences, **options.to_dict()) if sentences else []
    return " ".join(o for o in outputs if o)


def explain_text(
    translator: Translator, text: str, options: DecodingOptions, budget: Budget | None = None
) -> TextExplanation:
    """German text -> every sentence's translation and attention maps (one batch for all)."""
    sentences, left_out = sentences_of(text)
    return TextExplanation(explain_batch(translator, sentences, options, budget), options, left_out)


def explain_one(
    translator: Translator, text: str, options: DecodingOptions, budget: Budget, prefix=None, head_mask=None
) -> Explanation:
    """Translator.explain of one sentence through explain_batch, with its budget, prefix and head mask."""
    return explain_batch(translator, [text], options, budget, prefix, head_mask)[0].explanation


def word_spans(tokens: list[str]) -> list[list[int]]:
    """Group token positions into words: a piece starting with '▁' starts a word, punctuation, special tokens and
    each Han character (Chinese has no spaces to tell its words by) stand alone, and the byte pieces of one character
    (an emoji) stay together."""
    spans: list[list[int]] = []
    breaks = True  # the next piece starts a word
    for i, token in enumerate(tokens):
        text = token.replace("▁", "").strip()
        partial = "\ufffd" in token and bool(spans) and "\ufffd" in tokens[spans[-1][-1]]
        special = token in SPECIAL
        punct = not special and text != "" and all(not c.isalnum() for c in text) and "\ufffd" not in text
        han = bool(HAN.fullmatch(text))
        if not partial and (breaks or special or punct or han or token.startswith("▁")):
            spans.append([i])
        else:
            spans[-1].append(i)
        breaks = special or punct or han
    return spans


def words_of(translator: Translator, ids: list[int], tokens: list[str]) -> list[Word]:
    """The words of a token sequence, each written as the tokenizer decodes its pieces."""
    words = []
    for span in word_spans(tokens):
        if len(span) == 1 and tokens[span[0]] in SPECIAL:
            words.append((tokens[span[0]], span))
        else:
            words.append((translator.tokenizer.decode([ids[i] for i in span]).strip() or tokens[span[0]], span))
    return words


@dataclass
class Decoded:
    """One sentence translated, without maps: the ids the inside views replay the model over."""

    source_ids: list[int]  # the German pieces, ending in EOS
    input_ids: list[int]  # what the decoder reads: BOS + all but the last piece written
    output_ids: list[int]  # the pieces written, ending in EOS
    truncated: bool  # the German was cut at the model's limit


@torch.inference_mode()
def decode_batch(
    translator: Translator,
    sentences: list[str],
    options: DecodingOptions,
    budget: Budget | None = None,
    prefix=None,
    head_mask=None,
) -> list[Decoded]:
    """Translate the sentences as one batch; a `budget` (lens/cost.py) refuses, before decoding and again
    after it, a translation whose maps would pass its size."""
    config = translator.config
    encoded = [translator.encode_source(s) for s in sentences]
    if budget is not None:
        check_before(budget, config, [len(ids) for ids, _ in encoded], options.max_new_tokens)
    generated = translator.generate_ids(
        [ids for ids, _ in encoded],
        options.num_beams,
        options.length_penalty,
        options.max_new_tokens,
        translator.encode_prefix(prefix),
        head_mask,
    )
    outputs = [[i for i in ids if i != config.pad_id] for ids in generated]
    if budget is not None:
        check_after(budget, config, [(len(ids), len(out)) for (ids, _), out in zip(encoded, outputs)])
    return [
        Decoded(list(ids), [config.bos_id] + out[:-1], out, truncated)
        for (ids, truncated), out in zip(encoded, outputs)
    ]


def decode_one(
    translator: Translator,
    text: str,
    options: DecodingOptions | None = None,
    budget: Budget | None = None,
    head_mask=None,
    prefix=None,
) -> Decoded:
    """One sentence through decode_batch, within /explain's budget unless another is given."""
    return decode_batch(translator, [text], options or DecodingOptions(), budget or EXPLAIN, prefix, head_mask)[0]


@torch.inference_mode()
def explain_batch(
    translator: Translator,
    sentences: list[str],
    options: DecodingOptions,
    budget: Budget | None = None,
    prefix=None,
    head_mask=None,
) -> list[SentenceExplanation]:
    """Translator.explain for many sentences at once: one batched decode, one batched teacher-forced
    pass. Padding is masked, so each sentence's maps equal those of explaining it alone. A `budget`
    (lens/cost.py) refuses, before decoding and again before the maps are read, maps past its size;
    `prefix` (English text or ids) starts every translation, `head_mask` switches heads off in both passes.
    The one path from sentences to their maps: /explain, the page, the inside views, ablation."""
    if not sentences:
        return []
    decoded = decode_batch(translator, sentences, options, budget, prefix, head_mask)
    maps = teacher_forced_batch(
        translator,
        [d.source_ids for d in decoded],
        [d.output_ids for d in decoded],
        head_mask,
        [d.truncated for d in decoded],
    )
    return [
        SentenceExplanation(
            sentence,
            explanation,
            words_of(translator, d.source_ids, explanation.source_tokens),
            words_of(translator, d.output_ids, explanation.target_tokens),
            words_of(translator, d.input_ids, explanation.decoder_input_tokens),
            list(d.source_ids),
            list(d.input_ids),
            list(d.output_ids),
        )
        for sentence, d, explanation in zip(sentences, decoded, maps)
    ]
