"""The page's files (ui/static/): ES modules and stylesheets, served once and shared by every view.

A view's gr.HTML gets the page's styles and its own in its `head`, and a `js_on_load` that imports the page's one
entry module, ui/static/page.js, and mounts the view by name (`mount_js`): the browser fetches each module once,
page.js imports the page's own behaviour (the link, the walk) and each view's module when its view is mounted.
No list of script orders is kept anywhere: each module imports what it uses. A notebook's cell and the static
site use the same modules (ui.standalone bundles them for a cell; ui.export_site copies them).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import gradio as gr

from ui.standalone import VIEWER_STYLES, page_modules

STATIC = Path(__file__).resolve().parent / "static"
STYLES = list(VIEWER_STYLES)  # the viewer the page, a notebook and a saved file share
PAGE_CSS = STATIC / "page.css"  # the page around the views: header, compact inputs, phones
TOUR_CSS = STATIC / "tour.css"  # the guided walk's card, which the static site shows too
# The fonts Chinese text is drawn in where the system has one (macOS, Windows, Linux with fonts-noto-cjk), after
# the Latin ones: a browser takes each character from the first font that has it. site.css names the same.
CJK_FONTS = ["PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC"]
PAGE_ENTRY = "page.js"  # the module every view imports (ui/static/page.js)
# Each view's own stylesheets (ui/static/), after the shared ones.
VIEW_STYLES: dict[str, list[str]] = {
    "translate": [],  # the shared viewer is the whole view
    "step": ["step.css"],
    "headlab": ["heads.css"],
    "history": ["history.css"],
    "copylab": ["history.css", "copylab.css"],
    "lab": ["history.css", "lab.css"],
}

PRELOADED = [n for n in page_modules(PAGE_ENTRY) if n.endswith(".js")]  # what page.js imports before it runs

gr.set_static_paths(paths=[STATIC])


def _path(name: str) -> str:
    """The path of ui/static/<name> in the file route: relative to the working directory when the app runs from
    its own folder (as on a Space), so the page never shows the server's paths."""
    path = STATIC / name
    if path.is_relative_to(Path.cwd()):
        path = path.relative_to(Path.cwd())
    return f"/gradio_api/file={path.as_posix()}"


def static_url(name: str) -> str:
    """The URL of a stylesheet in ui/static/: the content hash in the query makes browsers fetch it again only
    when it changed. (Modules carry no query: they import each other by name, and the file route asks browsers
    to check them each time: ui.file_ranges.)"""
    digest = hashlib.sha1((STATIC / name).read_bytes()).hexdigest()[:10]
    return f"{_path(name)}?v={digest}"


def mount_js(view: str, *arguments: str) -> str:
    """The js_on_load of a view's gr.HTML: import page.js, then mount `view` (a name of page.js's MOUNTS) with
    the component's element, props and watch (and `arguments`, names js_on_load knows, such as server)."""
    passed = ", ".join(("element", "props", "watch", *arguments))
    return f'return import("{_path(PAGE_ENTRY)}").then((page) => page.mount("{view}", {passed}));'


def view_head(view: str) -> str:
    """The gr.HTML `head` of one view of VIEW_STYLES: the shared stylesheets, then the view's own, and a
    modulepreload of every module page.js imports, so that the browser fetches them side by side instead of one
    import after another."""
    styles = [f'<link rel="stylesheet" href="{static_url(n)}">' for n in STYLES + VIEW_STYLES[view]]
    preloads = [f'<link rel="modulepreload" href="{_path(n)}">' for n in PRELOADED]
    return "\n".join(styles + preloads)


def viewer_component(view: str = "result", elem_id: str | None = None, value: dict | None = None, **kwargs) -> gr.HTML:
    """A gr.HTML whose value (an explanation, see ui.payload.sentence_payload) the browser draws.

    `view` names a mount of ui/static/page.js, a function (element, props, watch) that builds the view and
    redraws on `watch("value", ...)`.
    """
    return gr.HTML(
        value=value,
        html_template='<div class="al-mount"></div>',
        head=view_head("translate"),
        elem_id=elem_id,
        js_on_load=mount_js(view),
        apply_default_css=False,
        **kwargs,
    )
