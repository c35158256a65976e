"""The translate view: German in, English out, and every attention map behind it.

The server sends one explanation per translation (ui.payload.sentence_payload: tokens, words, per-token
probabilities, maps as bytes); the browser (ui/static/) draws it and switches kind, layer, head,
view and token locally. Nothing is kept per user on the server.
"""

from __future__ import annotations

import time

import gradio as gr

from lens import cost
from lens.explain import BEAMS, LENGTH_PENALTY, DecodingOptions, TextExplanation, explain_batch
from ui.payload import page_payload

from .assets import viewer_component
from .locales import html, label, message, said
from .pair import Pair, explain_routed
from .public import BATCHED_CALLS
from .runtime import DECODING_METHODS, checked_text, decoding_options

EXAMPLES = [  # from the Multi30k validation split
    "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.",
    "Ein brauner Hund rennt dem schwarzen Hund hinterher.",
    "Eine Frau spielt ein Lied auf ihrem Cello.",
    "Zwei Hunde spielen im hohen Gras mit einem orangen Spielzeug.",
    # our own: two captions in one text, and one sentence unlike any caption
    "Ein Mann fährt Fahrrad. Zwei Kinder bauen am Strand eine Sandburg.",
    "Der Zug hat wegen eines Unfalls zwei Stunden Verspätung.",
    # everyday German, which the everyday model translates
    "Ich möchte ein Bier.",
    "Wo ist der Bahnhof?",
]
# Chinese, which the Chinese model translates (shown where the app has it): a reordered clause among them
CHINESE_EXAMPLES = ["我想要一杯啤酒。", "我昨天去了商店。"]
EMPTY_MESSAGE = message("app.translate.empty")
RUN_JS = "(...args) => { window.attentionLens && window.attentionLens.busy('#result'); return args; }"
# the second model's viewer waits only when it is asked (compare ticked); unticked, it gets no answer
SECOND_RUN_JS = (
    "(ticked, ...args) => { ticked && window.attentionLens && window.attentionLens.busy('#second-result');"
    " return [ticked, ...args]; }"
)
STALE_JS = "() => { window.attentionLens && window.attentionLens.markStale(); }"


def short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"


def page_call(concurrency_id: str) -> dict:
    """How a translate-view event runs: private, the last trigger wins, and the queue place shows (minimal);
    visitors' calls enter together and run as batches (ui/shared_calls.py)."""
    return dict(
        api_visibility="private",
        show_progress="minimal",
        trigger_mode="always_last",
        concurrency_limit=BATCHED_CALLS,
        concurrency_id=concurrency_id,
    )


def page_handler(pair: Pair, other: bool = False):
    """The page's handler: German and options in, an explanation to draw (or a message) out; each sentence by
    the model the router picks for it, or the one the visitor forced (`other`: by the model not picked, for the
    compare view's second side)."""

    def run(
        text: str, decoding: str, num_beams: float, length_penalty: float, max_length: float, model: str = "auto"
    ) -> dict:
        if not isinstance(text, str) or not text.strip():
            return {"id": time.time_ns(), "message": EMPTY_MESSAGE, "message_key": "app.translate.empty"}
        try:
            checked_text(text)  # one rule with the API: too many characters or sentences is refused, in words
            options = decoding_options(decoding, num_beams, length_penalty, max_length, pair.max_len)
            sentences, left_out = pair.sentences(text)
            start = time.perf_counter()
            picked = pair.grouped(sentences, model)[0] if other else None
            found = explain_routed(
                pair, sentences, options, cost.PAGE, other_side(pair, sentences, model) if other else model
            )
        except (ValueError, TypeError) as err:
            return {"id": time.time_ns(), **said(err)}
        payload = routed_payload(pair, found, options, left_out, time.perf_counter() - start)
        for sentence, first in zip(payload["sentences"], picked or []):  # the second side names the page's pick
            sentence["route"].update(forced=False, other=first.model)
        return payload

    return run


def other_side(pair: Pair, sentences: list[tuple[str, str]], model: str) -> list[str]:
    """The compare view's second side: for each sentence the other German model than the first side's; a Chinese
    sentence keeps the Chinese model (there is no other model of its direction)."""
    names = [n for n in pair.models if n != "zh-en"]
    routes, _ = pair.grouped(sentences, model)
    return [
        route.model if route.model == "zh-en" else next((n for n in names if n != route.model), route.model)
        for route in routes
    ]


def routed_payload(pair: Pair, found: list, options: DecodingOptions, left_out: int, seconds: float) -> dict:
    """page_payload for sentences translated by two models: each sentence with its model's evidence and alarm,
    and its route (which model, what it reads like, the words that said so, what was recased)."""
    device = pair.default.translator.device.type
    payload = page_payload(
        TextExplanation([], options, left_out),
        pair.default.translator.config,
        seconds,
        device,
        pair.default.familiarity,
    )
    for route, served, sentence in found:
        one = page_payload(
            TextExplanation([sentence], options), served.translator.config, seconds, device, served.familiarity
        )["sentences"][0]
        one.pop("domain", None)  # what the text reads like is the route's to say
        one["route"] = route.to_dict()
        one["threshold"] = served.familiarity.rule.confidence_below
        payload["sentences"].append(one)
    return payload


def first_visit(pair: Pair, text: str = EXAMPLES[0]) -> tuple[str, dict] | None:
    """The sentence and explanation a visitor sees on arrival, computed once at start-up (on the CPU copy of
    the models, before any GPU is attached), so the first visit shows a drawn map, not an empty box. None
    (an empty page, as before) when the model cannot explain it: the app starts all the same."""
    start = time.perf_counter()
    options = DecodingOptions(max_new_tokens=min(128, pair.max_len))
    try:
        found = []
        for route in pair.grouped(pair.sentences(text)[0])[0]:
            served = pair.served(route.model)
            found.append((route, served, explain_batch(served.translator, [route.text], options)[0]))
    except (ValueError, RuntimeError) as err:
        print(f"the first-visit example could not be explained ({err}); the page opens empty", flush=True)
        return None
    return text, routed_payload(pair, found, options, 0, time.perf_counter() - start)


MODEL_CHOICES = [
    (label("app.translate.model_auto"), "auto"),
    (label("app.translate.model_default"), "default"),
    (label("app.translate.model_everyday"), "everyday"),
    (label("app.translate.model_chinese"), "zh-en"),
]
# The search's codes (the API's too) with the words the page shows for them.
SEARCH_CHOICES = [(label("app.translate.search_beam"), "beam search"), (label("app.translate.search_greedy"), "greedy")]


def build(pair: Pair, initial: tuple[str, dict] | None = None) -> dict:
    """The view's widgets and events; returns its input widgets for other views to read. `initial`
    (first_visit's text and explanation) fills the page before any click."""
    run = page_handler(pair)
    two = pair.everyday is not None
    w = input_widgets(pair, initial, two)
    compare = gr.Checkbox(
        False,
        label=label("app.translate.compare"),
        visible=two,
        elem_id="compare",
    )
    result, second_result, shown = result_widgets(initial)
    inputs = [w["source"], w["decoding"], w["num_beams"], w["length_penalty"], w["max_length"], w["model"]]
    triggers = [
        w["translate"].click,
        w["source"].submit,
        w["decoding"].input,
        w["num_beams"].release,
        w["length_penalty"].release,
        w["max_length"].release,
        w["model"].input,
        w["examples"].load_input_event.then,
    ]
    if two:
        wire_second(pair, compare, inputs, triggers, shown, second_result)
    settings = page_call("page-explain")
    for event in triggers:
        event(run, inputs, result, js=RUN_JS, **settings)
    w["source"].input(None, None, None, js=STALE_JS, api_visibility="private")  # stale at once, no request
    names = ("source", "decoding", "num_beams", "length_penalty", "max_length", "model")
    return {**{name: w[name] for name in names}, "result": result}


def input_widgets(pair: Pair, initial: tuple[str, dict] | None, two: bool) -> dict:
    """The German box, then one button to translate; the examples, the search and its settings wait behind one
    more click (one control on arrival)."""
    with gr.Column(elem_id="input-row"):
        source = gr.Textbox(
            initial[0] if initial else "",
            label=label("app.translate.source"),
            show_label=False,
            lines=2,
            max_lines=6,
            autofocus=True,
            placeholder=label("app.translate.placeholder"),
            elem_id="source",
        )
        with gr.Row(elem_id="actions"):
            translate = gr.Button(
                label("app.translate.button"), variant="primary", elem_id="translate", scale=0, min_width=110
            )
            with gr.Accordion(label("app.translate.options"), open=False, elem_id="options"):
                with gr.Column(elem_id="examples-column"):
                    shown = EXAMPLES + (CHINESE_EXAMPLES if pair.chinese is not None else [])
                    examples = gr.Examples(
                        shown,
                        inputs=[source],
                        label=label("app.translate.examples_label"),
                        examples_per_page=len(shown),
                        example_labels=[short(e) for e in shown],
                    )
                options = option_widgets(pair, two)
    return {"source": source, "translate": translate, "examples": examples, **options}


def option_widgets(pair: Pair, two: bool) -> dict:
    """Options: the model, the search and its settings, and the choice to compute in the browser."""
    model = gr.Radio(
        [(name, value) for name, value in MODEL_CHOICES if value in ("auto", *pair.models)],
        value="auto",
        label=label("app.translate.model"),
        info=label("app.translate.model_info"),
        elem_id="model-choice",
        visible=two,
    )
    decoding = gr.Radio(
        [choice for choice in SEARCH_CHOICES if choice[1] in DECODING_METHODS],
        value="beam search",
        label=label("app.translate.search"),
        info=label("app.translate.search_info"),
        elem_id="decoding",
    )
    num_beams = gr.Slider(*BEAMS, value=4, step=1, label=label("app.translate.beams"), elem_id="beams")
    length_penalty = gr.Slider(
        *LENGTH_PENALTY,
        value=1.0,
        step=0.1,
        label=label("app.translate.length_penalty"),
        info=label("app.translate.length_penalty_info"),
        elem_id="length-penalty",
    )
    max_length = gr.Slider(
        8,
        pair.max_len,
        value=min(128, pair.max_len),
        step=8,
        label=label("app.translate.max_length"),
        elem_id="max-length",
    )
    gr.Checkbox(
        False,
        label=label("app.translate.in_browser"),
        elem_id="in-browser",
        info=label("app.translate.in_browser_info"),
    )
    return {
        "model": model,
        "decoding": decoding,
        "num_beams": num_beams,
        "length_penalty": length_penalty,
        "max_length": max_length,
    }


def result_widgets(initial: tuple[str, dict] | None) -> tuple[gr.HTML, gr.HTML, list]:
    """The result, and beside it (hidden until compared) the other model's; the widgets the comparison shows."""
    with gr.Row(elem_id="results-row", equal_height=False):
        with gr.Column(min_width=300):
            first_label = gr.HTML(
                html("app.translate.first_label", attributes="class='al-model-label'"),
                visible=False,
                padding=False,
            )
            result = viewer_component(
                elem_id="result",
                min_height=560,  # the space is kept from the start: no shift
                value=initial[1] if initial else None,
            )
        with gr.Column(min_width=300, visible=False, elem_id="second-column") as second_column:
            gr.HTML(
                html("app.translate.second_label", attributes="class='al-model-label'"),
                padding=False,
            )
            second_result = viewer_component(elem_id="second-result", min_height=560)
    return result, second_result, [first_label, second_column]


def wire_second(pair: Pair, compare: gr.Checkbox, inputs: list, triggers: list, shown: list, result: gr.HTML) -> None:
    """The other model's viewer: shown (with the `shown` widgets) while `compare` is ticked, fed by the same
    German and options, each sentence by the model the main viewer did not use."""
    run = page_handler(pair, other=True)

    def run_if_compared(ticked: bool, *args) -> dict | None:
        return run(*args) if ticked else None

    settings = page_call("page-explain-second")
    compare.change(
        lambda ticked: [gr.update(visible=ticked)] * len(shown), compare, shown, api_visibility="private"
    ).then(run_if_compared, [compare, *inputs], result, js=SECOND_RUN_JS, **settings)
    for event in triggers:
        event(run_if_compared, [compare, *inputs], result, js=SECOND_RUN_JS, **settings)
