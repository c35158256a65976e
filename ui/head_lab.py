"""The head lab view: switch attention heads off and see what changes; attribution beside attention.

The browser draws the layer x head grids (coloured by the measured importance of each head, from
head_importance.json beside the checkpoint) and keeps which heads are off; "Translate with these
heads" sends that mask, and the answer (both translations, the changed words, the ablated model's
maps) is drawn by the same viewer as the translate view. "Compare with attribution" sends the
sentence and draws its cross-attention and attribution maps on the same word axes.
"""

from __future__ import annotations

import time

import gradio as gr

from lens.ablate import head_mask_from
from lens.explain import DecodingOptions
from training_data.alarm import Familiarity
from translation import Translator

from .assets import mount_js, view_head
from .gpu_time import GpuTime
from .head_lab_data import (
    ablation_payload,
    attribution_payload,
    first_sentence,
    importance_payload,
    load_importance,
)
from .locales import html, label, said
from .pair import Pair
from .runtime import gpu

EXAMPLE = "Ein Mann isst in einem Restaurant zu Mittag."  # Multi30k val; the 3 most important heads change it
LAB_HEAD = view_head("headlab")  # its styles: ui.assets.VIEW_STYLES
# The mask is read from the grids in the browser when the button is pressed: the hidden textbox only carries it.
MASK_JS = (
    "(text, mask) => { const lens = window.attentionLens || {}; lens.labBusy && lens.labBusy('headlab-result');"
    " return [text, (lens.headMask && lens.headMask()) || mask]; }"
)
ATTRIBUTION_JS = (
    "(text, method, mask) => { const lens = window.attentionLens || {}; "
    "lens.labBusy && lens.labBusy('headlab-attribution');"
    " return [text, method, (lens.headMask && lens.headMask()) || mask]; }"
)
METHODS = {
    "integrated gradients (32 steps)": ("integrated_gradients", 32),
    "input × gradient (fast)": ("input_x_gradient", 1),
}
METHOD_LABELS = {  # the words the page shows for each of METHODS
    "integrated gradients (32 steps)": label("app.headlab.method_ig"),
    "input × gradient (fast)": label("app.headlab.method_gradient"),
}


def model_calls(translator: Translator, familiarity: Familiarity, options: DecodingOptions) -> tuple:
    """One model's two runs, each on the GPU for a bounded time; the model is closed over, never sent."""

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2, beams=lambda *_: options.num_beams))
    def ablated(text, mask):
        return ablation_payload(translator, text, mask, options, familiarity)

    # integrated gradients: up to 64 steps of forward + backward, each about three passes
    @gpu(duration=GpuTime(cap=60, runs=lambda _text, _method, steps, *_: 3 * steps, beams=lambda *_: options.num_beams))
    def attributed(text, method, steps, head_mask):
        return attribution_payload(translator, text, method, steps, options, head_mask)

    return ablated, attributed


def handlers(pair: Pair) -> tuple:
    """The lab's two handlers (ablation, attribution), each sentence by the model the router picks; every answer
    names its model."""
    config = pair.default.translator.config
    options = DecodingOptions(num_beams=4, length_penalty=1.0, max_new_tokens=min(128, config.max_len))
    calls = {name: model_calls(served.translator, served.familiarity, options) for name, served in pair.models.items()}

    def routed(text) -> tuple:
        route, served = pair.pick(first_sentence(text)[0])
        return route, calls[served.name]

    def run_ablation(text: str, mask_json: str) -> dict:
        """The page's handler: both translations and the ablated maps, or an error in words."""
        try:
            mask = head_mask_from(mask_json or "[]", config)
            route, (ablated, _) = routed(text)
            return {**ablated(route.text, mask), "model": route.model, "route": route.to_dict()}
        except (ValueError, TypeError) as err:
            return {"id": time.time_ns(), **said(err)}

    def run_attribution(text: str, method: str, mask_json: str = "[]") -> dict:
        """Attribution of the model as the grid above has it: with its heads switched off."""
        try:
            mask = head_mask_from(mask_json or "[]", config)
            route, (_, attributed) = routed(text)
            return {**attributed(route.text, *METHODS.get(method, (method, 32)), mask), "model": route.model}
        except (ValueError, TypeError) as err:
            return {"id": time.time_ns(), **said(err)}

    return run_ablation, run_attribution


def lab_view(mount: str, elem_id: str, value: dict | None = None, **kwargs) -> gr.HTML:
    """One of the lab's three views: a gr.HTML the page's module `mount` (ui/static/page.js) draws."""
    return gr.HTML(
        value=value,
        html_template='<div class="al-mount"></div>',
        head=LAB_HEAD,
        js_on_load=mount_js(mount),
        apply_default_css=False,
        elem_id=elem_id,
        **kwargs,
    )


def build(pair: Pair, model_id: str | None = None, revision: str | None = None) -> dict:
    """The view's widgets and events. `model_id` (folder or Hub repo) is where head_importance.json is read (the
    default model's: the grid's colours are its heads')."""
    config = pair.default.translator.config
    importance = importance_payload(load_importance(model_id, revision, config) if model_id else None, config)
    run_ablation, run_attribution = handlers(pair)

    with gr.Column(elem_id="headlab"):
        gr.HTML(html("app.headlab.intro", attributes="class='hl-intro'"), padding=False)
        source = gr.Textbox(
            value=EXAMPLE, label=label("app.headlab.source"), lines=1, max_lines=3, elem_id="headlab-source"
        )
        controls = lab_view("headControls", "headlab-controls", importance)
        with gr.Row(elem_id="headlab-actions"):
            apply = gr.Button(
                label("app.headlab.apply"), variant="primary", elem_id="headlab-apply", scale=0, min_width=280
            )
            mask = gr.Textbox(value="[]", visible="hidden", elem_id="headlab-mask")
        result = lab_view("headResult", "headlab-result", min_height=200)
        gr.HTML(html("app.headlab.attribution_intro", attributes="class='hl-intro'"), padding=False)
        with gr.Row(elem_id="headlab-attr-actions"):
            method = gr.Radio(
                [(METHOD_LABELS[name], name) for name in METHODS],
                value=next(iter(METHODS)),
                show_label=False,
                container=False,
                elem_id="headlab-method",
                scale=0,
                min_width=460,
            )
            attribute = gr.Button(label("app.headlab.attribute"), elem_id="headlab-attribute", scale=0, min_width=300)
        attribution = lab_view("attribution", "headlab-attribution", min_height=200)

    settings = dict(api_visibility="private", show_progress="hidden", trigger_mode="always_last")
    apply.click(run_ablation, [source, mask], result, js=MASK_JS, **settings)
    source.submit(run_ablation, [source, mask], result, js=MASK_JS, **settings)
    attribute.click(run_attribution, [source, method, mask], attribution, js=ATTRIBUTION_JS, **settings)
    return {"source": source, "controls": controls, "mask": mask, "result": result, "attribution": attribution}
