"""The REST / gradio_client / MCP API: /translate, /explain (any German text, paragraphs too), /trace
/ablate, and the inside views /qkv, /logit_lens, /contributions, /contrast and /patch.

Every argument is checked before the GPU is asked for (text length and sentences, finite numbers in
range); the docstrings' Args sections become the MCP tools' parameter descriptions. A `prefix`
(English text) forces the start of the translation of one sentence; decoding goes on freely after
it. /trace returns how one sentence was decoded, step by step (lens/trace.py); /ablate translates
one sentence with chosen attention heads switched off (lens/ablate.py).
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import gradio as gr

from lens import cost
from lens.ablate import ablate as ablate_heads
from lens.ablate import head_mask_from
from lens.code import code_view
from lens.contrast import contrast as why_not
from lens.contributions import contributions as who_wrote
from lens.cost import checked_whole
from lens.explain import BEAMS, LENGTH_PENALTY, MAX_CHARACTERS
from lens.logit_lens import logit_lens as read_stages
from lens.patching import patch as patch_encoder
from lens.qkv import qkv as open_row
from lens.tap_values import tap_values
from lens.trace import trace as trace_decoding
from translation import Translator
from ui.routed import Route, checked_choice

from . import lanes
from .gpu_time import GpuTime
from .head_lab_data import first_sentence
from .pair import Pair, Served, explain_routed
from .public import BATCHED_CALLS
from .runtime import (
    checked_text,
    checked_typed,
    decoding_options,
    friendly_errors,
    gpu,
    one_sentence,
)
from .shared_calls import batched_calls
from .step_through import one_sentence as step_sentence

Decoding = Literal["beam search", "greedy"]
MAX_PREFIX_CHARACTERS = 300
MAX_TOP_K = 50
MAP_DECIMALS = 3  # attention weights in answers: 0.001 apart, as the page's bytes are 0.002 apart
OPTIONS_DOC = f"""            decoding: "beam search" (keeps num_beams candidates, usually better) or "greedy" (one candidate).
            num_beams: beams for beam search, a whole number from {BEAMS[0]} to {BEAMS[1]} (ignored by greedy).
            length_penalty: {LENGTH_PENALTY[0]:g} to {LENGTH_PENALTY[1]:g}; above 1 favours longer translations
                (beam search only).
            max_length: most subword pieces per translated sentence, 1 to the model's max_len (256 here)."""


def checked_prefix(prefix) -> str | None:
    """The API's prefix: English text of at most MAX_PREFIX_CHARACTERS; empty means none."""
    if prefix is None:
        return None
    if not isinstance(prefix, str):
        raise ValueError(f"prefix must be English text, got {type(prefix).__name__}")
    if len(prefix) > MAX_PREFIX_CHARACTERS:
        raise ValueError(f"prefix has {len(prefix):,} characters; at most {MAX_PREFIX_CHARACTERS} are allowed")
    return checked_typed(prefix, "prefix").strip() or None


def checked_top_k(top_k) -> int:
    if (
        isinstance(top_k, bool)
        or not isinstance(top_k, (int, float))
        or not math.isfinite(top_k)
        or top_k != int(top_k)
        or not 1 <= top_k <= MAX_TOP_K
    ):
        raise ValueError(f"top_k must be a whole number between 1 and {MAX_TOP_K}, got {top_k!r}")
    return int(top_k)


def prefixed_sentence(text: str) -> str:
    """A prefix starts one translation: the text must be one sentence."""
    return one_sentence(text, MAX_CHARACTERS, "app.what.prefix")


def refuse_overlong(pair: Pair, sentences: list, model: str) -> None:
    """/translate returns text only, so a sentence that would be cut is refused instead of cut
    silently (/explain cuts it and says so in `truncated`)."""
    routes, _ = pair.grouped(sentences, model)
    for number, route in enumerate(routes, 1):
        served = pair.served(route.model)
        if served.translator.encode_source(route.text)[1]:
            raise ValueError(
                f"sentence {number} is longer than the model's limit of {served.translator.config.max_len} "
                "tokens, so only its start would be translated: split it, or use /explain, which "
                "translates the start and marks the cut"
            )


def check_inside(translator: Translator, sentence: str, options) -> None:
    """The budget of /qkv, /logit_lens and /contributions, checked before the model runs."""
    cost.check_before(
        cost.INSIDE, translator.config, [len(translator.encode_source(sentence)[0])], options.max_new_tokens
    )


def routed(answer: dict, route: Route) -> dict:
    """An answer with the model that made it and why: `model`, `reads_like` and `route` (lens/routed.Route)."""
    return {**answer, "model": route.model, "reads_like": route.reads_like, "route": route.to_dict()}


def model_calls(pair: Pair) -> dict:
    """The functions that run the model, each on the GPU for a bounded time (ZeroGPU), returning
    Python values and numpy arrays only; each sentence by the model the router picks (or the caller forced)."""

    def described(route: Route, served: Served, explanation) -> dict:
        """One /explain sentence: its maps, and the evidence and alarm of its model (training_data/alarm.py)."""
        report = served.familiarity.report(route.text, explanation.target_probs)
        report.pop("domain", None)  # what the text reads like is the route's to say
        return routed({"source": route.text, **explanation.to_dict(MAP_DECIMALS), **report}, route)

    def run_translate(text, options, prefix, model):
        sentences = pair.sentences(text)[0] if prefix is None else [prefixed_sentence(text)]
        refuse_overlong(pair, sentences, model)
        routes, english = pair.each(
            sentences, model, lambda served, texts: batched_calls(served.translator).translate(texts, (options, prefix))
        )
        return " ".join(e for e in english if e)

    def run_explain(text, options, prefix, model):
        if prefix is not None:
            text = prefixed_sentence(text)  # a prefix starts one translation
        sentences, left_out = pair.sentences(text)
        found = explain_routed(pair, sentences, options, cost.EXPLAIN, model, prefix)
        described_sentences = [described(route, served, s.explanation) for route, served, s in found]
        translation = " ".join(s.explanation.translation for _, _, s in found if s.explanation.translation)
        return described_sentences, translation, left_out

    inside = {name: inside_calls(served.translator, pair) for name, served in pair.models.items()}

    def one(call: str):
        """The endpoint `call` run on the sentence's model, with the sentence as routed (recased)."""

        def run(sentence: str, *args, model: str = "auto") -> dict:
            route, served = pair.pick(sentence, model)
            return routed(inside[served.name][call](route.text, *args), route)

        return run

    calls = {name: one(name) for name in INSIDE}
    return dict(translate=run_translate, explain=run_explain, **calls)


# The one-sentence calls each model answers (inside_calls), in the order inside_calls makes them.
INSIDE = ("trace", "ablate", "qkv", "logit_lens", "contributions", "contrast", "patch", "code", "taps")


def traced(translator: Translator, text: str, options, top_k: int, prefix) -> dict:
    """/trace's answer: one sentence decoded step by step, within lens.cost.TRACE."""
    cost.check_before(cost.TRACE, translator.config, [len(translator.encode_source(text)[0])], options.max_new_tokens)
    result = trace_decoding(
        translator,
        text,
        num_beams=options.num_beams,
        length_penalty=options.length_penalty,
        top_k=top_k,
        max_new_tokens=options.max_new_tokens,
        prefix=prefix,
    )
    return {"source": text, **result.to_dict(MAP_DECIMALS)}


def inside_calls(translator: Translator, pair: Pair) -> dict:
    """One model's single-sentence calls, each on the GPU for a bounded time; the model is closed over, never
    sent to the GPU worker."""

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # the search, then a pass that reads
    def run_trace(text, options, top_k, prefix):
        return traced(translator, text, options, top_k, prefix)

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # the search, then a pass that reads
    def run_ablate(sentence, mask, options):
        return ablate_heads(translator, sentence, mask, **options.to_dict()).to_dict(MAP_DECIMALS)

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # the search, then a pass that reads
    def run_qkv(sentence, kind, layer, head, row, options):
        check_inside(translator, sentence, options)
        return open_row(translator, sentence, kind, layer, head, row, options).to_dict()

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # the search, then a pass that reads
    def run_logit_lens(sentence, options, prefix):
        check_inside(translator, sentence, options)
        return read_stages(translator, sentence, options, prefix).to_dict()

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 3))
    def run_contributions(sentence, options, prefix):
        check_inside(translator, sentence, options)
        return who_wrote(translator, sentence, options, prefix=prefix).to_dict()

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 3))
    def run_contrast(sentence, step, alternative, options):
        return why_not(translator, sentence, step, alternative, options).to_dict()

    @gpu(duration=GpuTime(cap=30, runs=lambda sentence, *_: 2 + len(sentence) // 4))  # a replay per German piece
    def run_patch(sentence, corrupted, step, options):
        return patch_encoder(translator, sentence, corrupted, step, options).to_dict()

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # the search, then a pass that reads
    def run_code(sentence, layer, options):
        check_inside(translator, sentence, options)
        return code_view(translator, sentence, layer, options)

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # the search, then a pass that reads
    def run_taps(sentence, names, options):
        check_inside(translator, sentence, options)
        return tap_values(translator, sentence, names, options)

    runs = (
        run_trace,
        run_ablate,
        run_qkv,
        run_logit_lens,
        run_contributions,
        run_contrast,
        run_patch,
        run_code,
        run_taps,
    )
    return dict(zip(INSIDE, runs, strict=True))


@dataclass(frozen=True)
class Endpoint:
    """One row of the API table: the Gradio endpoint, its MCP tool and its line in docs/api.md are made from it."""

    name: str
    handler: Callable  # its own arguments, then `options` (the shared decoding options), then any after them
    doc: str  # the docstring; {options} stands for the decoding arguments
    cost: str  # what bounds one call (docs/limits.md)
    batched: bool = False  # BATCHED_CALLS let in at once and run as batches (ui/shared_calls.py), not CONCURRENCY

    @property
    def lane(self) -> str:
        """The queue lane its calls wait in (ui/lanes.py): cheap or heavy."""
        return lanes.lane_of(self.name)


DECODING_PARAMETERS = [
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=kind)
    for name, default, kind in (
        ("decoding", "beam search", Decoding),
        ("num_beams", 4, int),
        ("length_penalty", 1.0, float),
        ("max_length", 128, int),
    )
]


def with_decoding_options(endpoint: Endpoint, options_of) -> Callable:
    """The endpoint's function as the API calls it: `options` replaced by the four decoding arguments, checked
    into DecodingOptions; extra or unknown arguments refused by name; errors in words (friendly_errors)."""
    own = list(inspect.signature(endpoint.handler).parameters.values())
    at = [p.name for p in own].index("options")
    signature = inspect.Signature(
        own[:at] + DECODING_PARAMETERS + own[at + 1 :],
        return_annotation=inspect.signature(endpoint.handler).return_annotation,
    )

    def call(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"/{endpoint.name}: {err}") from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        checked_text(values["text"])  # the German first: an empty text is named before any option
        options = options_of(*(values.pop(p.name) for p in DECODING_PARAMETERS))
        return endpoint.handler(**values, options=options)

    call.__name__ = call.__qualname__ = endpoint.name
    call.__signature__ = signature
    call.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()} | {
        "return": signature.return_annotation
    }
    call.__doc__ = endpoint.doc.format(options=OPTIONS_DOC, model=MODEL_DOC)
    return friendly_errors(call)


Model = Literal["auto", "default", "everyday", "zh-en"]
MODEL_DOC = """            model: "auto" (each sentence by the model that knows its kind of German: the default model for photo
                captions, the everyday model for everyday German), "default" or "everyday" to force one."""


def endpoint_table(pair: Pair, run: dict) -> list[Endpoint]:
    """Every endpoint of the app, one row each (docs/api.md lists exactly these)."""
    config = pair.default.translator.config

    def translate(text: str, options=None, prefix: str = "", model: Model = "auto") -> str:
        return run["translate"](checked_text(text), options, checked_prefix(prefix), checked_choice(model))

    def explain(text: str, options=None, prefix: str = "", model: Model = "auto") -> dict:
        sentences, translation, left_out = run["explain"](
            checked_text(text), options, checked_prefix(prefix), checked_choice(model)
        )
        return {"translation": translation, "sentences": sentences, "left_out": left_out}

    def trace(text: str, options=None, top_k: int = 10, prefix: str = "", model: Model = "auto") -> dict:
        return run["trace"](
            step_sentence(checked_text(text)),
            options,
            checked_top_k(top_k),
            checked_prefix(prefix),
            model=checked_choice(model),
        )

    def ablate(text: str, heads: list | dict | str = "[]", options=None, model: Model = "auto") -> dict:
        sentence, left_out = first_sentence(checked_text(text))
        mask = head_mask_from(heads, config)
        return {**run["ablate"](sentence, mask, options, model=checked_choice(model)), "left_out": left_out}

    return [
        Endpoint("translate", translate, TRANSLATE_DOC, "text only: 5,000 characters, 16 sentences", batched=True),
        Endpoint("explain", explain, EXPLAIN_DOC, "lens.cost.EXPLAIN: 2.5 million attention weights", batched=True),
        Endpoint("trace", trace, TRACE_DOC, "lens.cost.TRACE: 1 million attention weights"),
        Endpoint("ablate", ablate, ABLATE_DOC, "lens.cost.ABLATE: 2.5 million attention weights"),
        *inside_endpoints(run, pair),
    ]


def inside_endpoints(run: dict, pair: Pair) -> list[Endpoint]:
    """/qkv, /logit_lens, /contributions, /contrast and /patch: how a weight, a word, a choice were computed, and where;
    /code: the model's source lines with the sentence's tensors; /taps: the tensors of named taps."""
    max_len = pair.max_len

    def qkv(
        text: str,
        kind: Literal["encoder", "decoder", "cross"] = "cross",
        layer: int = 1,
        head: int = 1,
        row: int = 1,
        options=None,
        model: Model = "auto",
    ) -> dict:
        return run["qkv"](
            step_sentence(checked_text(text)), kind, layer, head, row, options, model=checked_choice(model)
        )

    def logit_lens(text: str, options=None, prefix: str = "", model: Model = "auto") -> dict:
        return run["logit_lens"](
            step_sentence(checked_text(text)), options, checked_prefix(prefix), model=checked_choice(model)
        )

    def contributions(text: str, options=None, prefix: str = "", model: Model = "auto") -> dict:
        return run["contributions"](
            step_sentence(checked_text(text)), options, checked_prefix(prefix), model=checked_choice(model)
        )

    def contrast(text: str, step: int = 1, alternative: str = "", options=None, model: Model = "auto") -> dict:
        checked_whole(step, "step", 1, max_len, " (a piece of the translation)")  # the range before any work
        if not isinstance(alternative, str) or len(alternative) > 50:
            raise ValueError("alternative must be an English word or piece of at most 50 characters")
        checked_typed(alternative, "alternative")
        return run["contrast"](
            step_sentence(checked_text(text)), step, alternative, options, model=checked_choice(model)
        )

    def patch(text: str, corrupted: str = "", step: int = 0, options=None, model: Model = "auto") -> dict:
        checked_whole(step, "step", 0, max_len, " (a piece of the translation, or 0 for the first that differs)")
        corrupted = pair.router.prepared(step_sentence(checked_text(corrupted, "corrupted")))[0]
        return run["patch"](step_sentence(checked_text(text)), corrupted, step, options, model=checked_choice(model))

    def code(text: str, layer: int = 1, options=None, model: Model = "auto") -> dict:
        return run["code"](step_sentence(checked_text(text)), layer, options, model=checked_choice(model))

    def taps(text: str, names: list | str = "encoder.0.self_attn.weights", options=None, model: Model = "auto") -> dict:
        if isinstance(names, str) and names.strip().startswith("["):
            names = json.loads(names)
        return run["taps"](step_sentence(checked_text(text)), names, options, model=checked_choice(model))

    inside = "lens.cost.INSIDE: 2.5 million attention weights"
    return [
        Endpoint("qkv", qkv, QKV_DOC, inside),
        Endpoint("logit_lens", logit_lens, LOGIT_LENS_DOC, inside),
        Endpoint("contributions", contributions, CONTRIBUTIONS_DOC, inside),
        Endpoint("contrast", contrast, CONTRAST_DOC, "lens.cost.CONTRAST_WORK: 500 million weights replayed"),
        Endpoint("patch", patch, PATCH_DOC, "lens.cost.PATCH_WORK: 500 million weights replayed"),
        Endpoint("code", code, CODE_DOC, inside),
        Endpoint("taps", taps, TAPS_DOC, "lens.tap_values: 12 taps, 600,000 numbers"),
    ]


def build(pair: Pair) -> list[Endpoint]:
    """Register every endpoint of the table on the Blocks being built (each is an MCP tool too); returns the table."""
    max_len = pair.max_len

    def options_of(decoding, num_beams, length_penalty, max_length):
        return decoding_options(decoding, num_beams, length_penalty, max_length, max_len)

    table = endpoint_table(pair, model_calls(pair))
    for endpoint in table:
        batched = dict(concurrency_limit=BATCHED_CALLS, concurrency_id=endpoint.name) if endpoint.batched else {}
        gr.api(with_decoding_options(endpoint, options_of), api_name=endpoint.name, **batched)
    return table


TRANSLATE_DOC = """Translate German text (one sentence or a paragraph of up to 16 sentences) into English.

        Args:
            text: German text, at most 5,000 characters and 16 sentences; each sentence is translated on its own.
{options}
            prefix: English words the translation must start with (one sentence only); it goes on freely after them.
{model}
        Returns:
            The English translation, the sentences joined by spaces (each by its model).
        """

EXPLAIN_DOC = """Translate German text into English and return every attention map behind the translation.

        Args:
            text: German text, at most 5,000 characters and 16 sentences; each sentence is translated on its own.
{options}
            prefix: English words the translation must start with (one sentence only); it goes on freely after them.
{model}
        Returns:
            A dict: translation; sentences, one per German sentence, each with source, translation, source_tokens,
            target_tokens, decoder_input_tokens, target_probs and the maps encoder, decoder, cross as nested lists
            [layers][heads][rows][cols] (rows attend to columns); evidence, one entry per German word (word,
            count in the training data, counts per corpus, up to three training examples, rare, unseen);
            unfamiliar (true when the sentence is unlike its model's training data) and its reasons; model (which
            checkpoint translated it: default or everyday), reads_like (captions, everyday or not German) and route
            (the words that said so, the words recased, whether the model was forced); left_out, the
            sentences past 16 not translated. Weights have 3 decimals; a text whose maps would pass 2.5 million
            weights is refused with what to shorten.
        """

TRACE_DOC = """Show how one German sentence was translated, step by step.

        Args:
            text: one German sentence, at most 400 characters.
{options}
            top_k: how many candidates to list at each step, 1 to 50.
            prefix: English words the translation must start with; it goes on freely after them.
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): translation, source_tokens, target_tokens and steps, each with the chosen piece, its
            probability, the top_k candidates, the entropy (nats) and the cross/decoder attention rows
            [layers][heads][cols]; with beam search also the tree of kept hypotheses ("beam") and the
            ranked finished ones ("nbest").
        """

ABLATE_DOC = """Translate one German sentence with every attention head on, and with chosen heads switched off.

        Args:
            text: one German sentence (only the first sentence of a longer text is used).
            heads: JSON text: a list like ["cross:2:1", "encoder:1:*"] (kind:layer:head, counted from 1, '*' for
                all heads of the layer; kind encoder, decoder or cross), or a head mask {{"encoder": [[1, 0, ...],
                ...], "decoder": ..., "cross": ...}} with 1 = on and 0 = off.
{options}
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): both translations, the changed words, the heads switched off (counted from 0) and the
            attention maps of the model with those heads off.
        """

QKV_DOC = """Open up one row of one attention map: how its weights were computed from queries, keys and values.

        Args:
            text: one German sentence, at most 400 characters.
            kind: which map: encoder (German attends to German), decoder (English to the English before it) or
                cross (English to German).
            layer: the layer, counted from 1.
            head: the head, counted from 1.
            row: the row of the map (the token that attends), counted from 1: a German token for encoder, the
                decoder's input token (<s> first) for decoder and cross.
{options}
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): q (the row's query, d_k numbers), k and v (one d_k vector per column), scores (K q), scaled
            (scores / sqrt(d_k)), mask (true where the row may look), weights (the softmax of the scaled, masked
            scores: exactly the map's row), head_output (weights V, before W_O), output (the row after W_O, all
            heads), row_token and column_tokens.
        """

LOGIT_LENS_DOC = """Show when each English word was decided: the decoder's state after every sublayer, read as a prediction.

        Args:
            text: one German sentence, at most 400 characters.
{options}
            prefix: English words the translation must start with (a forced word); it goes on freely after them.
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): stages (the embedding, then for every decoder layer its self-attention, cross-attention and
            feed-forward), target_tokens, prob[stage][step] (the probability of the word finally written),
            top[stage][step] (the 5 most likely tokens with their probabilities) and decided_at (per step, the
            first stage from which the written word stays the favourite). The last stage is the model's output;
            early stages are rough, since the output layer was trained to read the last one.
        """

CODE_DOC = """The model's own source with one German sentence in it: each line that makes a tapped tensor, and that tensor.

        Args:
            text: one German sentence, at most 400 characters.
            layer: which layer's lines to fill in, 1 to the number of layers both stacks have.
{options}
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): files (model/attention.py,
            model/layers.py, model/transformer.py and generation/search.py as in the repository), taps (each tap's
            name with its layer as {{i}}, its name at this layer, the file and line that offer it and the line that
            called it, its shape for this sentence, its first 6 values, mean, spread and how many entries are -inf),
            layer, layers, source_ids and input_ids (the pieces the teacher-forced pass read).
        """

TAPS_DOC = """The numbers inside the model for one German sentence: the tensors of named taps, as the picture's steps draw them.

        Args:
            text: one German sentence, at most 400 characters.
            names: up to 12 tap names (model/taps.py), as a list or comma-separated: "encoder.0.self_attn.q",
                "decoder.2.cross_attn.weights", "logits", ...
{options}
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): source_ids and input_ids (the
            pieces the teacher-forced pass read), sizes (d_model, n_heads, d_ff, vocab_size) and taps: for each name its shape and its numbers flat (row-major,
            5 decimals), but "logits", which gives the 50 likeliest pieces of each row (top_ids, top_tokens,
            top_values).
        """

CONTRIBUTIONS_DOC = """Who wrote each English word: its shares from every German token and from the English before it (ALTI+).

        Args:
            text: one German sentence, at most 400 characters.
{options}
            prefix: English words the translation must start with (a forced word); it goes on freely after them.
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): source_tokens, target_tokens, input_tokens (<s>, then the pieces before each step),
            source[step][German token] and target[step][input token] (each step's shares sum to 1; later
            English gets 0), source_share[step], source_share_by_layer[decoder layer][step], encoder (the
            encoder's rolled-out German-to-German mixing), cross_attention[step][German token] (the mean of
            the cross-attention maps), agreement (their mean overlap with the source shares) and same_top.
            Contributions follow every attention block with its residual and a linearized LayerNorm, and
            leave the feed-forward sublayers out of the mixing (Ferrando et al. 2022).
        """

CONTRAST_DOC = """Why the translation wrote this word and not another: the logit difference and where it comes from.

        Args:
            text: one German sentence, at most 400 characters.
            step: which piece of the translation, counted from 1.
            alternative: the English word or piece to compare with (its first piece is used).
{options}
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): chosen and alternative (the two pieces), logit_diff (chosen minus alternative), baseline_logit_diff
            (with the German embeddings set to zero), source_tokens, source_attribution (integrated gradients of the
            difference to each German token; they sum to logit_diff - baseline_logit_diff up to completeness_gap)
            and heads ({{encoder, decoder, cross}}: [layer][head], how the difference changes with that head off).
        """

PATCH_DOC = """Which heads, and which encoder vectors, carry a word: activation patching between two German sentences.

        Args:
            text: the clean German sentence, at most 400 characters.
            corrupted: the same sentence with a word swapped for one of as many pieces (e.g. Hund -> Pferd).
            step: which piece of the clean translation, counted from 1; 0 (the default) takes the first piece
                where the two translations differ. The corrupted German must change it.
{options}
{model}
        Returns:
            A dict (with model, reads_like and route: which model answered, and why): step, clean_piece and corrupted_piece (the words each German gives there), clean_diff and
            corrupted_diff (logit of the clean piece minus the other's), clean_translation, corrupted_translation;
            restored ({{encoder, decoder, cross}}: [layer][head], the share of the clean choice that head's output,
            copied from the clean run into the corrupted one, brings back), all (every head patched: 1) and none
            (nothing patched: 0), both computed, top_heads (the three that restore most, counted from 1);
            levels (embedding, layer 1, ...), source_tokens, corrupted_tokens and recovered[level][position]
            (the same for one encoder vector of the residual stream).
        """
