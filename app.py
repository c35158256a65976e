"""Attention Lens: translate German to English and see every attention map that made the translation.

Run locally with `python app.py` (port 7860); on Hugging Face Spaces this file is the entry point.
The model comes from the Hub repo named by MODEL_ID (and MODEL_REVISION), else checkpoints/de-en.
The page is assembled from the views in ui/; each view builds its own widgets.
"""

from __future__ import annotations

import os
from pathlib import Path

try:  # ZeroGPU wants `spaces` imported before torch
    import spaces  # noqa: F401
except ImportError:
    pass

import gradio as gr

import ui.api
import ui.copylab
import ui.history
import ui.heads
import ui.step
import ui.translate
from lens.confidence import TRAINED_ON
from model import Translator
from ui.assets import PAGE_CSS

MODEL_ID = os.environ.get("MODEL_ID") or str(Path(__file__).resolve().parent / "checkpoints" / "de-en")
MODEL_REVISION = os.environ.get("MODEL_REVISION") or None

translator = Translator.from_pretrained(MODEL_ID, revision=MODEL_REVISION)
# System fonts: the page needs nothing from a font server to render.
THEME = gr.themes.Soft(font=["ui-sans-serif", "system-ui", "sans-serif"], font_mono=["ui-monospace", "monospace"])

with gr.Blocks(title="Attention Lens: German → English", fill_width=True) as demo:
    gr.HTML(f"<header id='page-header'><h1>Attention Lens</h1><p>German → English by a "
            f"hand-written Transformer, and the attention behind every word. <b>{TRAINED_ON}</b></p></header>", padding=False)
    ui.translate.build(translator)
    ui.step.build(translator)
    ui.heads.build(translator, MODEL_ID, MODEL_REVISION)
    ui.history.build(translator, MODEL_ID)
    ui.copylab.build()
    ui.api.build(translator)

demo.queue(default_concurrency_limit=2, max_size=64)

if __name__ == "__main__":
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"),
                server_port=int(os.environ.get("GRADIO_SERVER_PORT", 7860)), theme=THEME, css_paths=[PAGE_CSS])
