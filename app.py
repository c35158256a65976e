"""Attention Lens: translate German to English and see every attention map that made the translation.

Run locally with `python app.py` (port 7860); on Hugging Face Spaces this file is the entry point.
The default model comes from the Hub repo named by MODEL_ID (and MODEL_REVISION), else checkpoints/de-en; the
everyday model from EVERYDAY_MODEL_ID, else checkpoints/de-en-everyday ("none": the default model alone). Each
German sentence is translated by the model that knows its kind of German, and Chinese by the Chinese model from
ZH_MODEL_ID, else checkpoints/zh-en ("none": no Chinese model) (ui/pair.py); ATTENTION_LENS_INT8=1 translates with int8 weights on the CPU; ATTENTION_LENS_COMPILE=1 builds the
whole search in C++ in the background (on by default on a CPU Space).
The page is assembled from the views in ui/; each view builds its own widgets.
Listens on 127.0.0.1 unless SPACE_ID or GRADIO_SERVER_NAME asks for more (ui/public.py); the API
endpoints are also MCP tools at /gradio_api/mcp/.
"""

from __future__ import annotations

import os
from pathlib import Path

try:  # ZeroGPU: `spaces` must come before torch, which it patches to defer CUDA until a GPU is attached
    import spaces  # noqa: F401
except ImportError:  # not installed: not on a Space, and ui.runtime.gpu runs functions plainly
    spaces = None

import gradio as gr
import torch

import ui.api
import ui.copylab
import ui.head_lab
import ui.header
import ui.in_browser
import ui.lab
import ui.locales
import ui.step_through
import ui.time_travel
import ui.translate
from model import CheckpointError, ConfigError
from training_data.alarm import load_familiarity
from training_data.domain import domain_file
from training_data.language import language_file
from training_data.provenance import PAIRED, PAIRED_CHINESE, checkpoint_provenance
from translation import Translator
from ui import lanes, mcp_fairness, public
from ui.assets import CJK_FONTS, PAGE_CSS, TOUR_CSS
from ui.pair import Pair, Served
from ui.routed import Router


def load_required(model_id: str, revision: str | None = None, **options) -> Translator:
    """A checkpoint the page cannot do without: a bad config.json, model.safetensors or tokenizer.json stops
    the start with one line that names the file (its optional files only turn their features off)."""
    try:
        return Translator.from_pretrained(model_id, revision=revision, device="cpu", **options)
    except (CheckpointError, ConfigError, OSError, ValueError) as err:
        raise SystemExit("Attention Lens cannot start: " + " ".join(str(err).splitlines())) from None
    except RecursionError:
        raise SystemExit(
            f"Attention Lens cannot start: the config.json of {model_id} (or the config recorded in its "
            "model.safetensors) nests too deeply to be read"
        ) from None


public.limit_malloc_arenas()
MODEL_ID = os.environ.get("MODEL_ID") or str(Path(__file__).resolve().parent / "checkpoints" / "de-en")
MODEL_REVISION = os.environ.get("MODEL_REVISION") or None
# ATTENTION_LENS_INT8=1: translate with int8 weights on the CPU (faster on batches, approximate; the maps of
# explain() still come from the exact fp32 pass). Ignored on a GPU.
INT8 = os.environ.get("ATTENTION_LENS_INT8", "").strip().lower()
if INT8 not in ("", "0", "false", "no", "1", "true", "yes"):
    raise SystemExit(f"ATTENTION_LENS_INT8 must be 1 or 0, got {INT8!r}")
INT8 = INT8 in ("1", "true", "yes")
# ATTENTION_LENS_THREADS=N: torch threads per model call. By default the cores are shared out
# among the batched model calls that run at once (ui/public.BATCH_WORKERS): one thread each on two
# cores, where the page's click -> map took 322 instead of 342 ms (bench/page.py) and 20 clients
# got as many requests through (bench/app.py --clients 20 --threads 1 / 2).
THREADS = os.environ.get("ATTENTION_LENS_THREADS", "").strip()
if THREADS and (not THREADS.isdigit() or int(THREADS) < 1):
    raise SystemExit(f"ATTENTION_LENS_THREADS must be a number of threads (1 or more), got {THREADS!r}")
torch.set_num_threads(int(THREADS) if THREADS else max(1, torch.get_num_threads() // public.BATCH_WORKERS))

# The everyday checkpoint (EVERYDAY_MODEL_ID, else checkpoints/de-en-everyday when it is there; EVERYDAY_MODEL_ID=none:
# the default model translates everything). Each sentence goes to the model that knows its kind of German
# (ui/pair.py, ui/routed.py: the default checkpoint's language check, truecaser and domain guess).
EVERYDAY_ID = os.environ.get("EVERYDAY_MODEL_ID") or str(
    Path(__file__).resolve().parent / "checkpoints" / "de-en-everyday"
)
HAS_EVERYDAY = EVERYDAY_ID.lower() != "none" and bool(os.environ.get("EVERYDAY_MODEL_ID") or Path(EVERYDAY_ID).is_dir())
# The Chinese checkpoint (ZH_MODEL_ID, else checkpoints/zh-en when it is there; ZH_MODEL_ID=none: Chinese text is
# said to be Chinese, and the default model guesses).
ZH_ID = os.environ.get("ZH_MODEL_ID") or str(Path(__file__).resolve().parent / "checkpoints" / "zh-en")
HAS_CHINESE = ZH_ID.lower() != "none" and bool(
    os.environ.get("ZH_MODEL_ID") or (Path(ZH_ID) / "model.safetensors").is_file()
)
QUANTIZE = "int8" if INT8 and not torch.cuda.is_available() else None

# Loaded on the CPU, then moved at module level: on ZeroGPU cuda looks available here and the move
# is replayed whenever a @gpu function gets a GPU; elsewhere this is CUDA when present, else CPU.
translator = load_required(MODEL_ID, MODEL_REVISION, quantize=QUANTIZE)
# The training data's evidence (word counts, examples) and the alarm rule chosen for each checkpoint.
familiarity = load_familiarity(MODEL_ID, MODEL_REVISION)
everyday = (
    Served("everyday", load_required(EVERYDAY_ID, quantize=QUANTIZE), load_familiarity(EVERYDAY_ID))
    if HAS_EVERYDAY
    else None
)
chinese = Served("zh-en", load_required(ZH_ID, quantize=QUANTIZE), load_familiarity(ZH_ID)) if HAS_CHINESE else None
router = Router.of_checkpoint(MODEL_ID, MODEL_REVISION, everyday=HAS_EVERYDAY, chinese=HAS_CHINESE)
# What a visitor sees on arrival: an example already translated and drawn, computed once here on the CPU.
FIRST_VISIT = ui.translate.first_visit(Pair(Served("default", translator, familiarity), everyday, router, chinese))
# What the default model learned from, in the page's words (its results.json; captions only where it has none).
LEARNED = (
    (PAIRED_CHINESE if HAS_CHINESE else PAIRED) if HAS_EVERYDAY else checkpoint_provenance(MODEL_ID, MODEL_REVISION)
)


def on_device(model: Translator) -> Translator:
    """The CPU copy moved to the GPU where there is one."""
    if not torch.cuda.is_available():
        return model
    return Translator(model.model, model.tokenizer, device="cuda", model_card=model.model_card)


translator = on_device(translator)
if everyday is not None:
    everyday = Served("everyday", on_device(everyday.translator), everyday.familiarity)
if chinese is not None:
    chinese = Served("zh-en", on_device(chinese.translator), chinese.familiarity)
pair = Pair(Served("default", translator, familiarity), everyday, router, chinese)
# ATTENTION_LENS_COMPILE=1 (the default on a CPU Space, SPACE_ID set): the native search of each model is loaded
# from $ATTENTION_LENS_COMPILE_CACHE, or built there by a child process while visitors are served by the eager
# step (docs/spaces.md). 0: never compile.
COMPILE = os.environ.get("ATTENTION_LENS_COMPILE", "").strip().lower()
if COMPILE not in ("", "0", "false", "no", "1", "true", "yes"):
    raise SystemExit(f"ATTENTION_LENS_COMPILE must be 1 or 0, got {COMPILE!r}")
if COMPILE in ("1", "true", "yes") or (COMPILE == "" and os.environ.get("SPACE_ID")):
    for served in pair.models.values():
        if served.translator.device.type == "cpu" and served.translator.precision == "fp32":
            served.translator.compile(background=True)
# The model's files for the page's "compute in my browser" choice (ui/in_browser.py; None: no choice).
IN_BROWSER = ui.in_browser.served_model(
    translator,
    familiarity.rule.confidence_below,
    domain_file(MODEL_ID, MODEL_REVISION),
    language_file(MODEL_ID, MODEL_REVISION),
    everyday.translator if everyday is not None else None,
    everyday.familiarity.rule.confidence_below if everyday is not None else 0.0,
)
# The same lens as a free static Space (python -m ui.export_site DIR --push-to-hub USER/NAME), linked from the header.
STATIC_SITE_URL = os.environ.get("STATIC_SITE_URL") or None
# System fonts: the page needs nothing from a font server to render (Chinese: the CJK fonts systems have).
# Small text and the primary button dark enough to read: contrast at least 4.5:1 (WCAG AA; tests/test_a11y.py).
THEME = gr.themes.Soft(
    font=["ui-sans-serif", "system-ui", *CJK_FONTS, "sans-serif"], font_mono=["ui-monospace", "monospace"]
).set(
    body_text_color_subdued="*neutral_500",
    color_accent="*primary_600",
    button_primary_background_fill="*primary_600",
    button_primary_background_fill_hover="*primary_700",
)

# delete_cache: any file a view ever writes is swept within the hour (none does today).
with gr.Blocks(title=ui.locales.message("app.title"), fill_width=True, delete_cache=(900, 1800)) as demo:
    gr.HTML(ui.header.header(LEARNED, IN_BROWSER, STATIC_SITE_URL), padding=False)
    page = ui.translate.build(pair, FIRST_VISIT)
    # Each view opens from the picture of the model (ui/static/spine.js), the walk or a link: closed until then.
    with gr.Column(elem_id="view-step", elem_classes=["al-view", "al-closed"]):
        ui.step_through.build(pair, page["model"])
    with gr.Column(elem_id="view-headlab", elem_classes=["al-view", "al-closed"]):
        ui.head_lab.build(pair, MODEL_ID, MODEL_REVISION)
    with gr.Column(elem_id="view-history", elem_classes=["al-view", "al-closed"]):
        ui.time_travel.build(pair, MODEL_ID, ZH_ID if HAS_CHINESE else None)
    with gr.Column(elem_id="view-copylab", elem_classes=["al-view", "al-closed"]):
        ui.copylab.build()
    with gr.Column(elem_id="view-lab", elem_classes=["al-view", "al-closed"]):
        ui.lab.build()
    ui.api.build(pair)

# api_open=False: POST /gradio_api/run/<name> may not skip the queue (Gradio opens it off Spaces).
demo.queue(default_concurrency_limit=public.CONCURRENCY, max_size=public.QUEUE_SIZE, api_open=False)
public.friendly_queue_full(demo)
public.keep_waiting_sessions(demo)  # a waiting caller's session is never the one dropped from Gradio's message queues
lanes.share_queue(demo)  # per-client caps on waiting events, and places kept for /translate
public.name_missing_arguments(demo)
public.name_choice_errors(demo)
public.fast_traversal()  # a large answer's rows of numbers are not walked one by one on the event loop
public.json_mcp_answers()  # MCP tools answer JSON, not a Python repr
mcp_fairness.stateful_sessions()  # one MCP session per client, so that the queue's caps tell clients apart
mcp_fairness.quiet_disconnects()  # a client that goes away is one line in the log, not a traceback
mcp_fairness.fair_tool_calls()  # and a flood of one client is refused in the app's words, not the others' calls

if __name__ == "__main__":
    public.start_sweeper(demo)
    demo.launch(
        theme=THEME, css_paths=[PAGE_CSS, TOUR_CSS], i18n=ui.locales.I18N, **public.launch_settings()
    )  # mcp_server=True with gradio[mcp]
