"""Attention Lens: translate German to English and see every attention map that made the translation.

Run locally with `python app.py` (port 7860); on Hugging Face Spaces this file is the entry point.
The model comes from the Hub repo named by MODEL_ID (and MODEL_REVISION), else checkpoints/de-en.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import gradio as gr

import viz
from model import Translator

MODEL_ID = os.environ.get("MODEL_ID") or str(Path(__file__).resolve().parent / "checkpoints" / "de-en")
MODEL_REVISION = os.environ.get("MODEL_REVISION") or None

try:  # On a ZeroGPU Space, spaces.GPU attaches a GPU for the duration of the call.
    import spaces

    gpu = spaces.GPU
except ImportError:  # Anywhere else the decorator does nothing.

    def gpu(fn):
        return fn


translator = Translator.from_pretrained(MODEL_ID, revision=MODEL_REVISION)
CONFIG = translator.config
LAYERS = {"encoder": CONFIG.n_encoder_layers, "decoder": CONFIG.n_decoder_layers, "cross": CONFIG.n_decoder_layers}
MEAN = "mean over heads"
DEFAULT_MAX_LENGTH = min(128, CONFIG.max_len)
HEAD_CHOICES = [MEAN] + [f"head {h + 1}" for h in range(CONFIG.n_heads)]
# System fonts: the page needs nothing from a font server to render.
THEME = gr.themes.Soft(font=["ui-sans-serif", "system-ui", "sans-serif"], font_mono=["ui-monospace", "monospace"])
EMPTY_MESSAGE = "Type a German sentence above, or pick an example below."

EXAMPLES = [  # from the Multi30k validation split
    "Ein brauner Hund rennt dem schwarzen Hund hinterher.",
    "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.",
    "Eine Frau spielt ein Lied auf ihrem Cello.",
    "Zwei Hunde spielen im hohen Gras mit einem orangen Spielzeug.",
    "Ein älterer Mann geht mit einem braunen Hund an einer roten Leine spazieren.",
    "Ein kleiner Junge wirft einen Stein in ruhiges Wasser.",
    # and our own, in the same domain: people, animals, places, actions
    "Ein Mann fährt mit seinem Fahrrad durch die Stadt.",
    "Zwei Kinder bauen am Strand eine große Sandburg.",
    "Eine Katze schläft auf einem roten Sofa neben dem Fenster.",
    "Eine Gruppe von Freunden sitzt abends um ein Lagerfeuer.",
]


# ----- pure functions --------------------------------------------------------------------------


def friendly_errors(fn):
    """Any failure inside a handler becomes a short message for the user; the server keeps serving."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as err:
            raise gr.Error(f"Sorry, that did not work ({type(err).__name__}: {str(err)[:200]})") from err

    return wrapper


def decoding_options(decoding: str, num_beams: float, length_penalty: float, max_length: float) -> dict:
    """Widget values -> Translator keyword arguments, clamped to what the demo allows."""
    beams = 1 if decoding == "greedy" else int(min(max(num_beams, 1), 8))
    return dict(num_beams=beams, length_penalty=float(min(max(length_penalty, 0.0), 3.0)),
                max_new_tokens=int(min(max(max_length, 1), CONFIG.max_len)))


@gpu
def explain_text(text: str, options: dict):
    return translator.explain(text, **options)


@gpu
def translate_text(text: str, options: dict) -> str:
    return translator.translate(text, **options)


def status_line(result, seconds: float, options: dict) -> str:
    method = "greedy" if options["num_beams"] == 1 else f"beam search ({options['num_beams']} beams)"
    line = (f"{seconds * 1000:.0f} ms · {method} · {len(result.source_tokens)} source tokens → "
            f"{len(result.target_tokens)} target tokens · {translator.device.type.upper()}")
    if result.truncated:
        line = (f"⚠️ **The input is longer than the model's limit of {CONFIG.max_len} tokens: only its beginning "
                f"was translated.** {line}")
    return line


@friendly_errors
def run(text: str, decoding: str, num_beams: float, length_penalty: float, max_length: float):
    """Translate + explain for the UI: (English, status line, per-user explanation)."""
    if not text or not text.strip():
        return "", EMPTY_MESSAGE, None
    options = decoding_options(decoding, num_beams, length_penalty, max_length)
    start = time.perf_counter()
    result = explain_text(text, options)
    return result.translation, status_line(result, time.perf_counter() - start, options), result


def parse_choice(kind: str, layer: str, head: str) -> tuple[int, int | None]:
    layer_index = int(layer.split()[-1]) - 1 if layer else 0
    layer_index = min(max(layer_index, 0), LAYERS[kind] - 1)
    head_index = None if head in (None, MEAN) else int(head.split()[-1]) - 1
    return layer_index, head_index


def current_map(result, kind: str, layer: str, head: str):
    """The map the controls select: (matrix, column labels, row labels, which, layer index, head index),
    `which` naming the layer and head ("layer 3, head 2")."""
    layer_index, head_index = parse_choice(kind, layer, head)
    x_labels, y_labels = viz.axis_labels(kind, result.source_tokens, result.target_tokens, result.decoder_input_tokens)
    which = f"layer {layer_index + 1}, {MEAN if head_index is None else f'head {head_index + 1}'}"
    matrix = viz.select_map(getattr(result, kind), layer_index, head_index)
    return matrix, x_labels, y_labels, which, layer_index, head_index


@friendly_errors
def render(result, kind: str, layer: str, head: str):
    """Figures and the alignment table for the explanation in the user's state."""
    if result is None or not result.target_tokens:
        return None, None, None, []
    matrix, x_labels, y_labels, which, layer_index, head_index = current_map(result, kind, layer, head)
    single = viz.attention_figure(matrix, x_labels, y_labels, f"{viz.KINDS[kind]} — {which}")
    overview = viz.overview_figure(getattr(result, kind), x_labels, y_labels, f"{viz.KINDS[kind]}: every layer and head")

    cross = viz.select_map(result.cross, min(layer_index, LAYERS["cross"] - 1), head_index)
    alignment = viz.word_alignment(cross, result.source_tokens, result.target_tokens)
    alignment_plot = viz.alignment_figure(alignment, f"Word alignment from cross-attention — {which}")
    table = [[en, de, round(w, 3)] for en, de, w in alignment.links]
    return overview, single, alignment_plot, table


@friendly_errors
def exports(result, kind: str, layer: str, head: str):
    """The downloads: every map and token as JSON, the selected map as PNG."""
    if result is None or not result.target_tokens:
        return None, None
    matrix, x_labels, y_labels, which, layer_index, _ = current_map(result, kind, layer, head)
    title = f"{viz.KINDS[kind]} — {which}"
    folder = export_folder()
    json_path = folder / "attention-lens.json"
    json_path.write_text(json.dumps(result.to_dict()), encoding="utf-8")
    png_path = viz.save_png(matrix, x_labels, y_labels, title, folder / f"attention-{kind}-{layer_index + 1}.png")
    return str(json_path), str(png_path)


EXPORT_ROOT = Path(tempfile.gettempdir()) / "attention-lens-exports"
EXPORT_MAX_AGE_S = 3600


def export_folder() -> Path:
    """A fresh folder for one render's downloads; folders older than an hour are removed."""
    EXPORT_ROOT.mkdir(exist_ok=True)
    now = time.time()
    for old in EXPORT_ROOT.iterdir():
        if now - old.stat().st_mtime > EXPORT_MAX_AGE_S:
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(dir=EXPORT_ROOT))


def layer_choices(kind: str):
    choices = [f"layer {l + 1}" for l in range(LAYERS[kind])]
    return gr.Radio(choices=choices, value=choices[-1])


# ----- API endpoints ------------------------------------------------------------------------


@friendly_errors
def api_translate(text: str, decoding: str = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                  max_length: int = 128) -> str:
    """German text -> English text."""
    if not isinstance(text, str) or not text.strip():
        raise gr.Error("Please enter some German text to translate.")
    return translate_text(text, decoding_options(decoding, num_beams, length_penalty, max_length))


@friendly_errors
def api_explain(text: str, decoding: str = "beam search", num_beams: int = 4, length_penalty: float = 1.0,
                max_length: int = 128) -> dict:
    """German text -> translation, tokens and every attention map (lists [layers][heads][rows][cols])."""
    if not isinstance(text, str) or not text.strip():
        raise gr.Error("Please enter some German text to translate.")
    return explain_text(text, decoding_options(decoding, num_beams, length_penalty, max_length)).to_dict()


# ----- the UI ----------------------------------------------------------------------------------

# delete_cache: Gradio's copies of the downloads are dropped after an hour too.
with gr.Blocks(title="Attention Lens: German → English", delete_cache=(1800, 3600)) as demo:
    gr.Markdown(
        "# Attention Lens\nA Transformer written from scratch translates German into English. Below the "
        "translation: what every layer and head attended to while producing it."
    )
    explanation = gr.State(None)
    with gr.Row():
        with gr.Column(scale=3):
            source = gr.Textbox(label="German", placeholder="Ein Mann fährt Fahrrad.", lines=1, max_lines=6,
                                autofocus=True, elem_id="source")
            translate_button = gr.Button("Translate", variant="primary", elem_id="translate")
        with gr.Column(scale=3):
            english = gr.Textbox(label="English", interactive=False, lines=1, max_lines=6, elem_id="english",
                                 buttons=["copy"])
            status = gr.Markdown(EMPTY_MESSAGE, elem_id="status")
    with gr.Accordion("Decoding", open=False):
        with gr.Row():
            decoding = gr.Radio(["beam search", "greedy"], value="beam search", label="Method")
            num_beams = gr.Slider(1, 8, value=4, step=1, label="Beam size")
            length_penalty = gr.Slider(0.0, 2.0, value=1.0, step=0.1, label="Length penalty",
                                       info="> 1 favours longer translations")
            max_length = gr.Slider(8, CONFIG.max_len, value=DEFAULT_MAX_LENGTH, step=8, label="Maximum length (tokens)")
    gr.Examples(EXAMPLES, inputs=[source], label="Examples")

    gr.Markdown("## Attention explorer")
    with gr.Row():
        kind = gr.Radio([(label, key) for key, label in viz.KINDS.items()], value="cross", label="Attention",
                        elem_id="kind")
    with gr.Row():
        layer = gr.Radio([f"layer {l + 1}" for l in range(LAYERS["cross"])], value=f"layer {LAYERS['cross']}",
                         label="Layer", elem_id="layer")
        head = gr.Radio(HEAD_CHOICES, value=MEAN, label="Head", elem_id="head")
    with gr.Tabs():
        with gr.Tab("One map"):
            single_plot = gr.Plot(label="Attention map", elem_id="single-plot")
        with gr.Tab("All layers and heads"):
            overview_plot = gr.Plot(label="Every layer × every head", elem_id="overview-plot")
        with gr.Tab("Word alignment"):
            alignment_plot = gr.Plot(label="Word alignment", elem_id="alignment-plot")
            alignment_table = gr.Dataframe(headers=["English word", "German word it drew on", "attention"],
                                           label="Strongest link of each English word", interactive=False)
    with gr.Row():
        json_file = gr.DownloadButton("Download maps + tokens (JSON)", elem_id="download-json")
        png_file = gr.DownloadButton("Download this map (PNG)", elem_id="download-png")

    figures = [overview_plot, single_plot, alignment_plot, alignment_table]
    downloads = [json_file, png_file]
    view = [explanation, kind, layer, head]

    def redraw(event):
        """Figures first, then the files to download (the PNG takes a moment to draw)."""
        event.then(render, view, figures, api_visibility="private").then(exports, view, downloads,
                                                                          api_visibility="private")

    for trigger in (translate_button.click, source.submit):
        redraw(trigger(run, [source, decoding, num_beams, length_penalty, max_length], [english, status, explanation],
                       api_visibility="private"))
    redraw(kind.change(layer_choices, kind, layer, api_visibility="private"))
    for control in (layer, head):
        control.input(render, view, figures, api_visibility="private").then(exports, view, downloads,
                                                                            api_visibility="private")

    gr.api(api_translate, api_name="translate")
    gr.api(api_explain, api_name="explain")

demo.queue(default_concurrency_limit=2, max_size=64)

if __name__ == "__main__":
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"),
                server_port=int(os.environ.get("GRADIO_SERVER_PORT", 7860)), theme=THEME)
