"""The page's "compute in my browser" choice: the files the model in the page reads (ui/export_site.model_files:
fp16 weights, tokenizer, config, decoding rule), written once next to the app and served as static files, so
that a visitor's sentences need no server queue. The server stays for what needs it (who wrote each word,
patching, the training data, the other views)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import gradio as gr

from model.checkpoint.hub import resolve_file

from .assets import STATIC
from .export_site import model_files

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / ".in-browser"  # git-ignored; one subfolder a checkpoint


def served_model(model_id: str | Path, revision: str | None = None) -> str | None:
    """The URL folder (ending in '/') of the checkpoint's in-page files, written on first use; None when they
    cannot be written (a read-only disk): the page then offers no choice."""
    try:
        weights = resolve_file(model_id, "model.safetensors", revision=revision)
        stat = weights.stat()
        key = hashlib.sha1(json.dumps([str(weights), stat.st_size, stat.st_mtime_ns]).encode()).hexdigest()[:12]
        folder = FOLDER / key
        if not (folder / "site.json").is_file():
            model_files(folder, weights.parent)  # the checkpoint's folder (a Hub snapshot folder alike)
            shutil.copy(STATIC / "kernels.wasm", folder / "kernels.wasm")
    except (OSError, ValueError) as err:
        print(f"the in-browser model could not be written ({err}); the page computes on the server only", flush=True)
        return None
    gr.set_static_paths(paths=[folder])
    path = folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder
    return f"/gradio_api/file={path.as_posix()}/"
