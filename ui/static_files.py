"""Tags that load a view's own files from ui/static/ (next to the shared viewer's, see ui.assets)."""

from __future__ import annotations

from .assets import static_url as url


def tags(scripts: list[str], styles: list[str]) -> str:
    """<link>/<script> tags for a gr.HTML `head`: Gradio loads each once a page, before js_on_load."""
    return "\n" + "\n".join([f'<link rel="stylesheet" href="{url(n)}">' for n in styles]
                            + [f'<script src="{url(n)}"></script>' for n in scripts])
