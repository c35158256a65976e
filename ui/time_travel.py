"""The time-travel view: a slider over the snapshots of a training run. For the user's sentence,
what each snapshot translates, its attention maps (the same viewer as the translate view), the
val BLEU curve and the cross-attention sharpness per layer, with the current snapshot marked.

Snapshots come from SNAPSHOTS_DIR (a run or checkpoint folder holding snapshots/, or that folder
itself) or else from the model's own folder or Hub repo (branches step-NNNNN). The server reads
every snapshot once per sentence and streams them as they are ready; the slider moves in the
browser, with no server round trip. At most SNAPSHOT_CACHE snapshots stay loaded (default 3).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import gradio as gr

from lens.explain import DecodingOptions, sentences_of
from lens.time_travel import LRU, SnapshotLibrary
from ui.payload import page_payload

from .assets import mount_js, view_head
from .gpu_time import GpuTime
from .locales import html, label, message
from .pair import Pair, Served
from .runtime import checked_typed, gpu

SOURCE_ENV, CACHE_ENV = "SNAPSHOTS_DIR", "SNAPSHOT_CACHE"
APP_ROOT = Path(__file__).resolve().parent.parent  # paths under it are named relative to it
DEFAULT_SENTENCE = "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau."
MAX_CHARACTERS = 300  # one or two sentences: every snapshot translates them


def snapshot_source(model_id: str) -> str:
    return os.environ.get(SOURCE_ENV) or model_id


def cache_size() -> int:
    raw = os.environ.get(CACHE_ENV, "3")
    if not raw.isdigit() or not 1 <= int(raw) <= 16:
        raise ValueError(f"{CACHE_ENV} must be a whole number from 1 to 16, got {raw!r}")
    return int(raw)


def entry(snapshot) -> dict:
    return {
        "step": snapshot.step,
        "val_bleu": snapshot.val_bleu,
        "val_loss": snapshot.val_loss,
        "phase": snapshot.phase,
    }


def shown_name(root) -> str:
    """The snapshots' source as the page names it: a Hub repo id, or a local folder relative to the app
    (never the server's absolute path), else the folder's own name."""
    path = Path(str(root))
    if not path.is_absolute():
        return str(root)
    try:
        return str(path.resolve().relative_to(APP_ROOT))
    except ValueError:
        return path.name


def public(message: str, root) -> str:
    """A message with the server's absolute paths replaced by the names the page uses."""
    path = Path(str(root))
    if path.is_absolute():
        message = message.replace(str(path.resolve()), shown_name(root)).replace(str(path), shown_name(root))
    return message.replace(str(APP_ROOT) + "/", "")


def catalog(library: SnapshotLibrary) -> dict:
    """What the view shows before any sentence: the snapshots and their val figures, or why there are none.
    A bad index (or any failure to read it) is said in words; the rest of the page works on."""
    source = shown_name(library.root)
    try:
        snapshots = library.snapshots()
    except Exception as err:  # OSError, ValueError, a corrupt file's own errors: time travel is off, said why
        why = public(
            f"{type(err).__name__}: {err}" if not isinstance(err, (OSError, ValueError)) else str(err), library.root
        )
        return {"id": time.time_ns(), "message": f"The snapshots of {source} could not be read: {why}"[:400]}
    if not snapshots:
        return {
            "id": time.time_ns(),
            "message": message("app.history.none"),
            "message_key": "app.history.none",
            "source": source,
        }
    return {"id": time.time_ns(), "source": source, "snapshots": [entry(s) for s in snapshots]}


def reading_options(text: str, max_len: int) -> DecodingOptions:
    """Greedy, with a length limit near the sentence's own: early snapshots babble until the limit,
    and a short one keeps their maps (and what is sent) small."""
    return DecodingOptions(num_beams=1, max_new_tokens=min(64, max_len, 8 + 3 * len(text.split())))


def traveller(library: SnapshotLibrary, drawn, max_len: int, note_of=lambda text: ""):
    """The view's handler: every snapshot's reading of a text, streamed one snapshot at a time;
    `drawn(snapshot, text, options)` reads one (a sentence seen before is instant); `note_of(text)` (a catalogue
    key, or "") says when the page translates the text with another model than the one whose training is shown."""
    readings = LRU(64)  # (snapshot, text) -> what the browser draws

    def run(text: str):
        """Every snapshot's reading of `text`, streamed one snapshot at a time."""
        shown = catalog(library)
        if "snapshots" not in shown:
            yield shown
            return
        if not isinstance(text, str) or not text.strip():
            yield {**shown, "message": message("app.history.empty"), "message_key": "app.history.empty"}
            return
        try:
            sentences, _ = sentences_of(checked_typed(text[:MAX_CHARACTERS], "text"))
            text = " ".join(sentences[:2])
            options = reading_options(text, max_len)
            snapshots = library.snapshots()
            out = {
                **shown,
                "text": text,
                "snapshots": [entry(s) for s in snapshots],
                "done": False,
                "note": message(note_of(text)) if note_of(text) else "",
                "note_key": note_of(text),
            }
            for i, snapshot in enumerate(snapshots):
                key = (snapshot.path or snapshot.revision, text)
                before = readings.misses
                out["snapshots"][i] = readings.get(key, lambda: drawn(snapshot, text, options))
                out["done"] = i == len(snapshots) - 1
                if out["done"]:  # what the trained model makes of the sentence: unlike its training data?
                    last = (out["snapshots"][i].get("explanation") or {}).get("sentences") or [{}]
                    out.update(
                        unfamiliar=bool(last[0].get("unfamiliar")),
                        reasons=last[0].get("reasons", []),
                        alarms=last[0].get("alarms", []),
                    )
                if out["done"] or readings.misses != before:  # stream what was read; cached ones go along
                    out["id"] = time.time_ns()
                    yield out
        except (ValueError, TypeError, OSError) as err:
            yield {**shown, "error": public(str(err), library.root)[:300]}
        except Exception as err:  # a snapshot that cannot be loaded (CheckpointError, a corrupt file): said, not null
            yield {
                **shown,
                "error": public(f"a snapshot could not be read ({type(err).__name__}: {err})", library.root)[:300],
            }

    return run


NOTE_KEY = "app.history.note_everyday"


def route_note(pair: Pair):
    """The note (its catalogue key, or "") for a text the page translates with the everyday model: these
    snapshots are the default model's."""

    def note_of(text: str) -> str:
        models = {pair.router.route(sentence).model for sentence in sentences_of(text)[0]}
        return NOTE_KEY if "everyday" in models else ""

    return note_of


def model_run(served: Served, source: str, note_of=lambda text: ""):
    """The traveller over one model's snapshots (`source`: a folder or Hub repo), with its familiarity
    (training_data/alarm.py) for the unfamiliar-input notice; and its snapshot library."""
    translator, familiarity = served.translator, served.familiarity
    library = SnapshotLibrary(source, max_loaded=cache_size(), device=translator.device.type)

    @gpu(duration=GpuTime(cap=30, runs=lambda *_: 2))  # a snapshot read in, then its translation and maps
    def read(snapshot, text, options):
        return library.read(snapshot, text, options)

    def drawn(snapshot, text: str, options: DecodingOptions) -> dict:
        start = time.perf_counter()
        reading = read(snapshot, text, options)
        model_config = library.translator(snapshot).config
        x = page_payload(
            reading.explanation, model_config, time.perf_counter() - start, translator.device.type, familiarity
        )
        return {
            **entry(snapshot),
            "explanation": x,
            "translation": reading.explanation.translation,
            "sharpness": [round(float(v), 3) for v in reading.sharpness],
            "uniform": round(reading.uniform, 3),
        }

    return traveller(library, drawn, translator.config.max_len, note_of), library


def routed_run(pair: Pair, default_run, chinese_run):
    """Each text through the snapshots of the model that translates its first sentence: the Chinese model's for
    Chinese (where it has snapshots), the default model's for the rest."""

    def run(text: str):
        chinese = chinese_run is not None and isinstance(text, str) and text.strip()
        if chinese and pair.router.route(first_sentence(text)).model == "zh-en":
            yield from chinese_run(text)
        else:
            yield from default_run(text)

    return run


def first_sentence(text: str) -> str:
    try:
        return sentences_of(text[:MAX_CHARACTERS])[0][0]
    except (ValueError, TypeError, IndexError):
        return text


def build(pair: Pair, model_id: str, chinese_id: str | None = None) -> dict:
    """The view's widgets and events: the default model's snapshots (`model_id`, or SNAPSHOTS_DIR), and the Chinese
    model's (`chinese_id`) for Chinese text."""
    default_run, library = model_run(pair.default, snapshot_source(model_id), route_note(pair))
    chinese_run = model_run(pair.chinese, chinese_id)[0] if pair.chinese is not None and chinese_id else None
    run = routed_run(pair, default_run, chinese_run)

    gr.HTML(html("app.history.intro"), padding=False)
    with gr.Row(elem_id="history-input"):
        text = gr.Textbox(
            value=DEFAULT_SENTENCE,
            label=label("app.history.source"),
            show_label=False,
            lines=1,
            max_lines=2,
            scale=5,
            min_width=240,
            placeholder=label("app.history.placeholder"),
            elem_id="history-source",
        )
        go = gr.Button(label("app.history.go"), variant="primary", scale=0, min_width=100, elem_id="history-go")
    view = gr.HTML(
        value=catalog(library),
        html_template='<div class="al-mount"></div>',
        head=view_head("history"),
        js_on_load=mount_js("history"),
        apply_default_css=False,
        elem_id="history",
        min_height=560,
    )
    settings = dict(api_visibility="private", show_progress="hidden", trigger_mode="always_last")
    go.click(run, text, view, **settings)
    text.submit(run, text, view, **settings)
    return {"history_source": text, "history": view}
