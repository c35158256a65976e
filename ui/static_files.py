"""Tags that load a view's own files from ui/static/ (next to the shared viewer's, see ui.assets)."""

from __future__ import annotations

import hashlib

from .assets import STATIC


def url(name: str) -> str:
    # The content hash in the query makes browsers fetch a file again only when it changed.
    digest = hashlib.sha1((STATIC / name).read_bytes()).hexdigest()[:10]
    return f"/gradio_api/file={STATIC / name}?v={digest}"


def tags(scripts: list[str], styles: list[str]) -> str:
    """<link>/<script> tags for a gr.HTML `head`: Gradio loads each once a page, before js_on_load."""
    return "\n" + "\n".join([f'<link rel="stylesheet" href="{url(n)}">' for n in styles]
                            + [f'<script src="{url(n)}"></script>' for n in scripts])
