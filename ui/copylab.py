"""The copy-task lab: "Train a tiny Transformer now". training.lab.train_copy trains the copy task
(the same model and step code as `train.py --task copy`) for a few seconds; this view streams its
loss curve, its predictions against the expected output and one cross-attention map to the browser
(ui/static/copylab.js) as it turns from uniform into a diagonal.

One lab run at a time on the server: the event has concurrency_limit=1 (others queue and see their
place), and the training itself holds a lock, so a run whose page was closed stops before the next starts.
"""

from __future__ import annotations

import os
import queue
import threading
import time

import gradio as gr

from training.lab import CAPS, MAX_TIME_S, CopyLabProgress, CopyLabSettings, train_copy
from ui.payload import quantize

from .assets import mount_js, view_head
from .locales import html, label, said

TIME_ENV = "COPYLAB_TIME_S"  # a shorter time limit (tests, busy servers); never above MAX_TIME_S
REPORT_EVERY = 10  # steps between updates sent to the browser
_one_at_a_time = threading.Lock()


class Stopped(Exception):
    """The page that asked for the run went away: stop training."""


def time_limit() -> float:
    raw = os.environ.get(TIME_ENV, str(MAX_TIME_S))
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{TIME_ENV} must be a number of seconds, got {raw!r}") from None
    if not 0 < value <= MAX_TIME_S:
        raise ValueError(f"{TIME_ENV} must be more than 0 and at most {MAX_TIME_S:g} seconds, got {raw!r}")
    return value


def whole(name: str, value) -> int:
    """A widget or API number that must be whole (sliders send floats)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value % 1:
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return int(value)


def lab_settings(n_layers, n_heads, d_model, lr, steps) -> CopyLabSettings:
    """Widget values -> checked settings; a ValueError names the setting and its allowed range."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise ValueError(f"learning rate must be a number, got {lr!r}")
    return CopyLabSettings(
        n_layers=whole("layers", n_layers),
        n_heads=whole("heads", n_heads),
        d_model=whole("d_model", d_model),
        lr=float(lr),
        steps=whole("steps", steps),
    ).validate()


def progress_payload(p: CopyLabProgress, limit: float) -> dict:
    """What the browser draws of one progress report: numbers, letters and the map as bytes."""
    words = lambda tokens: [[t, [i]] for i, t in enumerate(tokens)]  # noqa: E731 (each symbol is a word)
    sentence = {
        "tokens": {"src": p.source_tokens, "tgt": p.target_tokens, "in": []},
        "words": {"src": words(p.source_tokens), "tgt": words(p.target_tokens), "in": []},
        "maps": {"cross": quantize(p.cross_attention)},
    }
    layers, heads = p.cross_attention.shape[:2]
    return {
        "id": time.time_ns(),
        "step": p.step,
        "total": p.total_steps,
        "elapsed": round(p.elapsed_s, 2),
        "limit": limit,
        "losses": p.losses,
        "examples": p.examples,
        "accuracy": p.accuracy,
        "done": p.done,
        "stopped_by_time": p.stopped_by_time,
        "map": {"layers": {"cross": layers}, "heads": heads, "sentences": [sentence]},
    }


def stream(settings: CopyLabSettings, limit: float):
    """Run train_copy in a thread and yield each progress report as it comes."""
    reports, stop = queue.Queue(), threading.Event()
    run = settings.train_settings().validate()  # what the loss is made of: its floor (copylab.js draws it)
    loss_terms = {"label_smoothing": run.label_smoothing, "vocab_size": run.vocab_size}

    def report(p: CopyLabProgress) -> None:
        if stop.is_set():
            raise Stopped
        reports.put({**progress_payload(p, limit), **loss_terms})  # built now: the progress object changes

    def work() -> None:
        try:
            with _one_at_a_time:
                train_copy(settings, report, time_limit_s=limit, report_every=REPORT_EVERY)
        except Stopped:  # the page went away: nobody reads the reports, the run just ends
            return
        except Exception as err:  # shown on the page; the server keeps serving
            reports.put({"id": time.time_ns(), "error": f"Training failed: {type(err).__name__}: {err}"[:300]})
        reports.put(None)

    threading.Thread(target=work, daemon=True, name="copy-lab").start()
    try:
        while (payload := reports.get()) is not None:
            yield payload
    finally:
        stop.set()  # the page went away (or the run ended): a running training stops at its next report


def run(n_layers, n_heads, d_model, lr, steps):
    """The Train button: stream progress reports, or one message saying what to fix."""
    try:
        settings = lab_settings(n_layers, n_heads, d_model, lr, steps)
        limit = time_limit()
    except ValueError as err:
        yield {"id": time.time_ns(), **said(err)}
        return
    yield {"id": time.time_ns(), "starting": True, "total": settings.steps, "limit": limit}
    yield from stream(settings, limit)


def build() -> dict:
    """The view's widgets and its one event (one run at a time, queued)."""
    gr.HTML(html("app.copylab.intro", seconds=f"{time_limit():g}"), padding=False)
    with gr.Row(elem_id="copylab-settings"):
        n_layers = gr.Radio([1, 2], value=2, label=label("app.copylab.layers"), min_width=90, elem_id="copylab-layers")
        n_heads = gr.Radio([1, 2, 4], value=4, label=label("app.copylab.heads"), min_width=120, elem_id="copylab-heads")
        d_model = gr.Slider(
            *CAPS["d_model"],
            value=64,
            step=16,
            label=label("app.copylab.width"),
            min_width=140,
            elem_id="copylab-width",
        )
        lr = gr.Slider(
            *CAPS["lr"], value=3e-3, step=1e-4, label=label("app.copylab.lr"), min_width=140, elem_id="copylab-lr"
        )
        steps = gr.Slider(
            *CAPS["steps"], value=300, step=10, label=label("app.copylab.steps"), min_width=140, elem_id="copylab-steps"
        )
    with gr.Row(elem_id="copylab-actions"):
        train = gr.Button(
            label("app.copylab.train"), variant="primary", scale=0, min_width=110, elem_id="copylab-train"
        )
        status = gr.Markdown("", elem_id="copylab-queue", container=False)
    view = gr.HTML(
        value=None,
        html_template='<div class="al-mount"></div>',
        head=view_head("copylab"),
        js_on_load=mount_js("copylab"),
        apply_default_css=False,
        elem_id="copylab",
        min_height=420,
    )
    # Gradio's status on `status` shows the place in the queue while another run trains.
    train.click(
        run,
        [n_layers, n_heads, d_model, lr, steps],
        view,
        api_name="copy_lab",
        api_visibility="undocumented",
        concurrency_limit=1,
        concurrency_id="copylab",
        show_progress="full",
        show_progress_on=status,
        js="(...a) => { window.attentionLens && window.attentionLens.copyLabWaiting(); return a; }",
    )
    return {"copylab": view}
