"""The step-through view: watch a translation being made word by word, force a word, see the beam.

The server traces the decoding once for greedy and once for beam search (lens/trace.py) and sends
both; the browser (ui/static/stepthrough.js, beam.js) steps, shades and switches layer/head locally.
Forcing a word or opening the maps of a hypothesis asks the server once (server functions of the
view's gr.HTML); the maps are drawn by the shared viewer (ui/static/viewer.js).
Shape legend: T output steps, L decoder layers, H heads, S source tokens.
"""

from __future__ import annotations

import time

import gradio as gr
import numpy as np

from lens.cost import PAGE, check_before
from lens.explain import (
    BEAMS,
    DecodingOptions,
    SentenceExplanation,
    TextExplanation,
    words_of,
)
from lens.maps import teacher_forced
from lens.trace import Trace, trace
from translation import Translator
from ui.payload import page_payload, quantize

from .assets import mount_js, view_head
from .gpu_time import GpuTime
from .lanes import Lane
from .locales import html, label, said
from .pair import Pair
from .runtime import checked_typed, gpu
from .runtime import one_sentence as runtime_one_sentence

MAX_CHARACTERS = 400  # one sentence; a longer text is refused before any work
MAX_WORD_CHARACTERS = 40  # a word typed to be forced
TOP_K = 10
# The server functions run outside Gradio's queue (component_server), so they share a bounded lane of their own.
SIDE_LANE = Lane("step-view")
EXAMPLES = [
    "Ein weißer Junge fegt eine Veranda mit einem großen Besen.",  # greedy and beam part at 'sweeping' / 'is'
    "Ein Mann fährt Fahrrad.",
    "Eine Frau spielt ein Lied auf ihrem Cello.",
    "Zwei Hunde spielen im hohen Gras mit einem orangen Spielzeug.",
]
RUN_JS = (
    "(...args) => { document.querySelectorAll('.st-view').forEach((v) => v.classList.add('st-busy')); return args; }"
)


STEP_HEAD = view_head("step")  # its styles: ui.assets.VIEW_STYLES


def one_sentence(text) -> str:
    """The sentence to step through (ui.runtime.one_sentence, at most MAX_CHARACTERS)."""
    return runtime_one_sentence(text, MAX_CHARACTERS, "app.what.step")


def checked_ids(translator: Translator, ids, name: str) -> list[int]:
    """A list of token ids from the page or the API: integers in the vocabulary, at most max_len."""
    config = translator.config
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ValueError(f"{name} must be a list of token ids (integers)")
    if len(ids) > config.max_len or not all(0 <= i < config.vocab_size for i in ids):
        raise ValueError(f"{name} must hold at most {config.max_len} ids, each in [0, {config.vocab_size})")
    return ids


def typed_prefix(translator: Translator, ids: list[int], word) -> list[int]:
    """The ids of the first words, then a word the user typed (a space before it unless it is punctuation)."""
    if not isinstance(word, str) or not word.strip() or len(word) > MAX_WORD_CHARACTERS:
        raise ValueError(f"type one English word (at most {MAX_WORD_CHARACTERS} characters) to force it")
    return translator.prefix_with_word(ids, checked_typed(word, "the typed word"))


def trace_payload(translator: Translator, result: Trace, src_ids: list[int]) -> dict:
    """One decoding for the page: tokens, per-step candidates and entropy, attention rows as bytes, the beam."""
    T = len(result.steps)
    cross = np.stack([s.cross for s in result.steps])  # (T, L, H, S)
    decoder = np.zeros(cross.shape[:3] + (T,), np.float32)  # (T, L, H, T): row t holds t + 1 inputs
    for t, step in enumerate(result.steps):
        decoder[t, :, :, : t + 1] = step.decoder
    piece = result.token_text.get
    nodes = [
        {
            "id": n.id,
            "parent": n.parent,
            "step": n.step,
            "token": piece(n.token_ids[-1]) if n.token_ids else "<s>",
            "ids": n.token_ids,
            "log_prob": round(n.log_prob, 3),
            "score": round(n.score, 3),
            "status": n.status,
        }
        for n in result.beam
    ]
    return {
        "translation": result.translation,
        "num_beams": result.num_beams,
        "length_penalty": result.length_penalty,
        "prefix_length": result.prefix_length,
        "src": {
            "tokens": result.source_tokens,
            "words": [[w, span] for w, span in words_of(translator, src_ids, result.source_tokens)],
        },
        "tokens": result.target_tokens,
        "ids": result.target_ids,
        "probs": [round(s.prob, 4) for s in result.steps],
        "entropy": [round(s.entropy, 3) for s in result.steps],
        "forced": [s.forced for s in result.steps],
        "top": [[[piece(i), i, round(p, 4)] for i, p in zip(s.top_ids, s.top_probs)] for s in result.steps],
        "cross": quantize(cross),
        "decoder": quantize(decoder),
        "beam": nodes,
        "nbest": result.nbest,
    }


def maps_payload(translator: Translator, source: str, src_ids: list[int], out_ids: list[int], num_beams: int) -> dict:
    """The shared viewer's payload (ui.payload.page_payload) for one given output: its teacher-forced maps."""
    start = time.perf_counter()
    explanation = teacher_forced(translator, src_ids, out_ids)
    tgt_in = [translator.config.bos_id] + out_ids[:-1]
    sentence = SentenceExplanation(
        source,
        explanation,
        words_of(translator, src_ids, explanation.source_tokens),
        words_of(translator, out_ids, explanation.target_tokens),
        words_of(translator, tgt_in, explanation.decoder_input_tokens),
    )
    options = DecodingOptions(num_beams, 1.0, translator.config.max_len)
    return page_payload(
        TextExplanation([sentence], options), translator.config, time.perf_counter() - start, translator.device.type
    )


def view_payload(translator: Translator, text: str, num_beams: int) -> dict:
    """What the view draws for a sentence: the greedy trace and, with beams, the beam-search trace."""
    config = translator.config
    src_ids, _ = translator.encode_source(text)
    check_before(PAGE, config, [len(src_ids)], translator.config.max_len)  # maps of both searches, bounded first
    greedy = trace(translator, text, num_beams=1, top_k=TOP_K)
    beam = trace(translator, text, num_beams=num_beams, top_k=TOP_K) if num_beams > 1 else None
    return {
        "id": time.time_ns(),
        "source": text,
        "num_beams": num_beams,
        "layers": config.n_decoder_layers,
        "heads": config.n_heads,
        "greedy": trace_payload(translator, greedy, src_ids),
        "beam": trace_payload(translator, beam, src_ids) if beam else None,
    }


def notice(familiarity, source: str, probs: list[float]) -> dict:
    """Whether the sentence is unlike the training data, and why (training_data/alarm.py), for the view's notice."""
    report = familiarity.report(source, np.asarray(probs, dtype=np.float32))
    return {"unfamiliar": report["unfamiliar"], "reasons": report["reasons"], "alarms": report.get("alarms", [])}


def checked_request(request, keys: tuple[str, ...]) -> dict:
    """A request from the browser: an object with only the keys this function reads."""
    if not isinstance(request, dict) or not set(request) <= set(keys):
        raise ValueError(f"expected an object with the keys {', '.join(keys)}")
    return {key: request.get(key) for key in keys}


def checked_beams(num_beams) -> int:
    return DecodingOptions.checked(num_beams, 1.0, 1, 1).num_beams


def model_calls(translator: Translator) -> tuple:
    """The view's three model runs (trace both searches; force a prefix; the maps of one hypothesis),
    each on the GPU for a bounded time (ZeroGPU), returning Python values only."""

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 4, beams=lambda _text, num_beams: num_beams))  # both searches
    def traced(text: str, num_beams: int) -> dict:
        return view_payload(translator, text, num_beams)

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 3, beams=lambda _text, num_beams, _prefix: num_beams))
    def forced(text: str, num_beams: int, prefix: list[int]) -> dict:
        src_ids, _ = translator.encode_source(text)
        result = trace(translator, text, num_beams=num_beams, top_k=TOP_K, prefix=prefix)
        return {
            "trace": trace_payload(translator, result, src_ids),
            "maps": maps_payload(translator, text, src_ids, result.target_ids, num_beams),
        }

    @gpu(duration=GpuTime(cap=20, runs=lambda *_: 2))
    def explained(text: str, ids: list[int]) -> dict:
        src_ids, _ = translator.encode_source(text)
        return maps_payload(translator, text, src_ids, ids, 1)

    return traced, forced, explained


def handlers(pair: Pair) -> tuple:
    """The view's handler and its two server functions (run, force, hypothesis). Each sentence is traced by the model
    the router picks (or the one forced); the model's familiarity (training_data/alarm.py) says, as the translate view does,
    when the sentence is unlike its training data; every answer names its model."""
    calls = {name: model_calls(served.translator) for name, served in pair.models.items()}

    def picked(text, model) -> tuple:
        route, served = pair.pick(one_sentence(text), model if model else "auto")
        return route, served, calls[served.name]

    def run(text, num_beams, model="auto") -> dict:
        try:
            route, served, (traced, _, _) = picked(text, model)
            x = traced(route.text, checked_beams(num_beams))
            return {
                **x,
                **notice(served.familiarity, x["source"], (x["beam"] or x["greedy"])["probs"]),
                "source": route.written,
                "model": route.model,
                "route": route.to_dict(),
            }
        except (ValueError, TypeError) as err:
            return {"id": time.time_ns(), **said(err)}

    def force(request: dict) -> dict:
        """{text, num_beams, ids, word, model}: force ids (the first pieces and a candidate), or ids and a typed
        word; the new decoding and its maps. (The browser sends one object: see mountStep.)"""
        try:
            request = checked_request(request, ("text", "num_beams", "ids", "word", "model"))
            route, served, (_, forced, _) = picked(request["text"], request["model"])
            num_beams = checked_beams(request["num_beams"])
            prefix = checked_ids(served.translator, request["ids"], "prefix")
            if request.get("word") is not None:
                prefix = typed_prefix(served.translator, prefix, request["word"])
            if not prefix:
                raise ValueError("nothing to force: pick a candidate or type a word")
            return {**SIDE_LANE.run(forced, route.text, num_beams, prefix), "model": route.model}
        except (ValueError, TypeError) as err:
            return said(err)

    def hypothesis(request: dict) -> dict:
        """{text, ids, model}: the maps of one hypothesis of the beam (its pieces, taken as the output)."""
        try:
            request = checked_request(request, ("text", "ids", "model"))
            route, served, (_, _, explained) = picked(request["text"], request["model"])
            ids = checked_ids(served.translator, request["ids"], "hypothesis")
            if not ids:
                raise ValueError("the start of the search has no words yet: pick a later hypothesis")
            return {**SIDE_LANE.run(explained, route.text, ids), "model": route.model}
        except (ValueError, TypeError) as err:
            return said(err)

    return run, force, hypothesis


def build(pair: Pair, model_choice: gr.components.Component | None = None) -> dict:
    """The view's widgets, its event and the two server functions the browser calls; `model_choice` (the page's
    Model option) forces a model."""
    run, force, hypothesis = handlers(pair)

    with gr.Column(elem_id="step-view"):
        gr.HTML(html("app.step.intro"), padding=False)
        with gr.Row(elem_id="step-inputs"):
            source = gr.Textbox(
                label=label("app.step.source"),
                show_label=False,
                lines=1,
                max_lines=3,
                scale=5,
                min_width=240,
                value=EXAMPLES[0],
                elem_id="step-source",
                placeholder=label("app.step.placeholder"),
            )
            beams = gr.Slider(
                *BEAMS, value=4, step=1, label=label("app.step.beams"), scale=2, min_width=160, elem_id="step-beams"
            )
            go = gr.Button(label("app.step.go"), variant="primary", scale=0, min_width=130, elem_id="step-go")
        examples = gr.Examples(EXAMPLES, inputs=[source], label=label("app.step.examples"))
        view = gr.HTML(
            value=None,
            html_template='<div class="al-mount"></div>',
            head=STEP_HEAD,
            elem_id="step-result",
            js_on_load=mount_js("step", "server"),
            apply_default_css=False,
            server_functions=[force, hypothesis],
            min_height=400,
        )
    settings = dict(api_visibility="private", show_progress="hidden", trigger_mode="always_last", js=RUN_JS)
    inputs = [source, beams] + ([model_choice] if model_choice is not None else [])
    for event in (go.click, source.submit, beams.release):
        event(run, inputs, view, **settings)
    examples.load_input_event.then(run, inputs, view, **settings)
    return {"source": source, "beams": beams, "result": view}
