"""The page's "compute in my browser" choice: the files the model in the page reads (ui/export_site.model_files:
fp16 weights, tokenizer, config, decoding rule, domain guess), written once next to the app and served as static files, so
that a visitor's sentences need no server queue. The server stays for what needs it (who wrote each word,
patching, the training data, the other views)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import gradio as gr
import torch

from translation import Translator

from .assets import STATIC
from .export_site import pair_files, weights_of

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / ".in-browser"  # git-ignored; one subfolder a checkpoint


def served_model(
    translator: Translator,
    confidence_below: float,
    domain: Path | None = None,
    language: Path | None = None,
    everyday: Translator | None = None,
    everyday_below: float = 0.0,
) -> str | None:
    """The URL folder (ending in '/') of the pair's in-page files (ui/export_site.pair_files: the default model with
    copies of the checked `domain` and `language` files where there are some, the everyday model in everyday/),
    written on first use (one folder per set of weights and files); None when they cannot be written (a read-only
    disk): the page then offers no choice."""
    if translator.precision != "fp32" or (everyday is not None and everyday.precision != "fp32"):
        return None  # int8 decoding keeps other weights: the page's fp16 copy would not be them
    try:
        digest = hashlib.sha1()
        for model in (translator, everyday):
            for name, tensor in sorted(weights_of(model, "fp16").items()) if model is not None else ():
                digest.update(name.encode() + tensor.view(torch.int16).numpy().tobytes())
        for path in (domain, language):
            digest.update(path.read_bytes() if path is not None else b"-")
        folder = FOLDER / digest.hexdigest()[:12]
        if not (folder / "site.json").is_file():
            pair_files(folder, translator, confidence_below, everyday, everyday_below, domain=domain, language=language)
            shutil.copy(STATIC / "kernels.wasm", folder / "kernels.wasm")
    except (OSError, ValueError) as err:
        print(f"the in-browser model could not be written ({err}); the page computes on the server only", flush=True)
        return None
    gr.set_static_paths(paths=[folder])
    path = folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder
    return f"/gradio_api/file={path.as_posix()}/"
