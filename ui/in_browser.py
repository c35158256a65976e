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
from .export_site import model_files, weights_of

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / ".in-browser"  # git-ignored; one subfolder a checkpoint


def served_model(translator: Translator, confidence_below: float, domain: Path | None = None) -> str | None:
    """The URL folder (ending in '/') of the translator's in-page files, with a copy of `domain` (the checked
    domain file, lens.domain.domain_file) where there is one, written on first use (one folder per set of weights
    and domain file); None when they cannot be written (a read-only disk): the page then offers no choice."""
    if translator.precision != "fp32":  # int8 decoding keeps other weights: the page's fp16 copy would not be them
        return None
    try:
        digest = hashlib.sha1()
        for name, tensor in sorted(weights_of(translator, "fp16").items()):
            digest.update(name.encode() + tensor.view(torch.int16).numpy().tobytes())
        digest.update(domain.read_bytes() if domain is not None else b"")
        folder = FOLDER / digest.hexdigest()[:12]
        if not (folder / "site.json").is_file():
            model_files(folder, translator, confidence_below, domain=domain)
            shutil.copy(STATIC / "kernels.wasm", folder / "kernels.wasm")
    except (OSError, ValueError) as err:
        print(f"the in-browser model could not be written ({err}); the page computes on the server only", flush=True)
        return None
    gr.set_static_paths(paths=[folder])
    path = folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder
    return f"/gradio_api/file={path.as_posix()}/"
