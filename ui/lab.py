"""The lab view (ui/static/lab.js): the paper's Transformer built differently on purpose, two tiny models trained side
by side in the visitor's browser (workers), A as the paper has it and B with one thing changed. Nothing of it runs
on the server: the component only gives the page a place to mount it."""

from __future__ import annotations

import gradio as gr

from .assets import mount_js, view_head
from .locales import html


def build() -> dict[str, gr.HTML]:
    gr.HTML(html("app.lab.intro"), padding=False)
    view = gr.HTML(
        value=None,
        html_template='<div class="al-mount"></div>',
        head=view_head("lab"),
        js_on_load=mount_js("lab"),
        apply_default_css=False,
        elem_id="lab",
        min_height=420,
    )
    return {"lab": view}
