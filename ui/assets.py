"""The page's files (ui/static/), served once and shared by every view, and the one list of what each view loads.

A view that shows maps calls `viewer_component()` (or passes `view_head(name)` to its own gr.HTML): Gradio
loads the scripts, in order, before the component's `js_on_load` runs, and loads each only once a page.
`VIEW_FILES` is the only list of page scripts: every view's `head` is built from it here, and
tests/test_page_contract.py checks it against ui/static/ (every script listed once, each touching one
global, `window.AttentionLens`). The shared viewer's part comes from lens.standalone, which inlines the
same files into a notebook cell or a saved page.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import gradio as gr

from lens.standalone import VIEWER_SCRIPTS, VIEWER_STYLES

STATIC = Path(__file__).resolve().parent / "static"
SCRIPTS, STYLES = list(VIEWER_SCRIPTS), list(VIEWER_STYLES)  # the viewer the page, a notebook and a saved file share
PAGE_CSS = STATIC / "page.css"  # the page around the views: header, compact inputs, phones

gr.set_static_paths(paths=[STATIC])


def static_url(name: str) -> str:
    """The URL of ui/static/<name>. Relative to the working directory when the app runs from its own
    folder (as on a Space), so the page never shows the server's paths; the content hash in the query
    makes browsers fetch a file again only when it changed."""
    digest = hashlib.sha1((STATIC / name).read_bytes()).hexdigest()[:10]
    path = STATIC / name
    if path.is_relative_to(Path.cwd()):
        path = path.relative_to(Path.cwd())
    return f"/gradio_api/file={path.as_posix()}?v={digest}"


# the model in the page (docs/site.md): its tokenizer, the Transformer, the search, the payload, the inside views
IN_PAGE_SCRIPTS = ["bpe.js", "transformer.js", "search.js", "sentences.js", "domain.js", "router.js", "inpage.js",
                   "inside.js"]
# the page only: one sentence for every view, the link, the guided walk, the picture of the model, the choice
# to compute in the visitor's browser
PAGE_SCRIPTS = ["walk.js", "tour.js", "browser.js"]  # (the picture, spine.js, is the viewer's: lens.standalone)
# the static site's own boot (ui/export_site.py), after the viewer and IN_PAGE_SCRIPTS
SITE_SCRIPTS = ["site.js"]
PAGE_STYLES = ["spine.css"]
# Each view's own scripts and styles (ui/static/), loaded after HEAD's, in this order. A script needs only
# the ones before it at load time (core.js first: it makes window.AttentionLens).
VIEW_FILES: dict[str, tuple[list[str], list[str]]] = {
    "translate": ([], []),  # the shared viewer is the whole view
    "step": (["beam.js", "steptext.js", "why.js", "stepinside.js", "stepthrough.js"], ["step.css"]),
    "headlab": (["headlab.js", "attribution.js"], ["heads.css"]),
    "history": (["timetravel.js"], ["history.css"]),
    "copylab": (["copylab.js"], ["history.css", "copylab.css"]),
}


def _tags(scripts: list[str], styles: list[str]) -> list[str]:
    return ([f'<link rel="stylesheet" href="{static_url(n)}">' for n in styles]
            + [f'<script src="{static_url(n)}"></script>' for n in scripts])


HEAD = "\n".join(_tags(SCRIPTS + IN_PAGE_SCRIPTS + PAGE_SCRIPTS, STYLES + PAGE_STYLES))  # every view: the shared viewer and the page's own


def view_head(view: str) -> str:
    """The gr.HTML `head` of one view of VIEW_FILES: HEAD, then the view's own styles and scripts."""
    scripts, styles = VIEW_FILES[view]
    return HEAD + ("\n" + "\n".join(_tags(scripts, styles)) if scripts or styles else "")


def viewer_component(mount: str = "AttentionLens.mountResult", elem_id: str | None = None, value: dict | None = None,
                     **kwargs) -> gr.HTML:
    """A gr.HTML whose value (an explanation, see lens.payload.sentence_payload) the browser draws.

    `mount` names a JS function (element, props, watch) that builds the view and redraws on
    `watch("value", ...)`; it runs once the viewer's scripts have loaded.
    """
    return gr.HTML(value=value, html_template='<div class="al-mount"></div>', head=view_head("translate"),
                   elem_id=elem_id,
                   js_on_load=f"{mount}(element, props, watch);", apply_default_css=False, **kwargs)
