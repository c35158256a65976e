"""The viewer outside the app: a translation and every map of it, drawn in a notebook cell or a saved file.

    from lens import show
    show(translator, "Ein Hund rennt.")           # in Jupyter: the cell draws the viewer
    show(translator, "Ein Hund rennt.").save("dog.html")

The cell is self-contained, the way bertviz's are: the viewer's scripts and styles (ui/static/, the
same files the page loads) and the payload (lens/payload.py, the same one the page draws) are inlined,
so it needs no server and no network. The buttons that ask the model more (how a weight was computed,
when a word was decided) need a running app: pass its address as `server=` and they call its API;
without one they are hidden.
"""

from __future__ import annotations

import html
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from .alarm import Familiarity
from .cost import PAGE
from .explain import DecodingOptions, explain_text
from .payload import page_payload

VIEWER = Path(__file__).resolve().parent.parent / "ui" / "static"  # the page's own viewer files
VIEWER_SCRIPTS = ("core.js", "draw.js", "viewer.js", "result.js", "qkv.js", "ladder.js", "who.js",
                  "patchlab.js", "spine.js")  # each adds to AttentionLens
VIEWER_STYLES = ("lens.css", "spine.css")  # the page's own stylesheets: a notebook figure looks like the page


@dataclass
class Shown:
    """One explanation ready to draw: `_repr_html_()` for notebooks, `save()` for a file."""

    payload: dict
    server: str | None = None  # a running app's address, for the buttons that call its API

    def html(self, page: bool = False) -> str:
        """The viewer as HTML: a fragment (a notebook cell), or with `page` a whole document."""
        root = f"al-show-{uuid.uuid4().hex[:10]}"
        styles = "\n".join((VIEWER / name).read_text(encoding="utf-8") for name in VIEWER_STYLES)
        scripts = "\n;\n".join((VIEWER / name).read_text(encoding="utf-8") for name in VIEWER_SCRIPTS)
        data = json.dumps(self.payload, separators=(",", ":")).replace("</", "<\\/")  # no early </script>
        server = json.dumps(self.server).replace("</", "<\\/")
        fragment = (f'<style>{styles}</style>\n<div id="{root}" class="al-show"></div>\n<script>{scripts}\n;'
                    f'AttentionLens.mountStandalone(document.getElementById("{root}"), {data}, {server});</script>')
        if not page:
            return fragment
        title = html.escape(" ".join(s["source"] for s in self.payload["sentences"])[:80] or "Attention Lens")
        return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
                f'content="width=device-width, initial-scale=1"><title>{title}</title></head>\n'
                f'<body style="font-family: system-ui, sans-serif; margin: 1rem">\n{fragment}\n</body></html>\n')

    def _repr_html_(self) -> str:
        return self.html()

    def save(self, path: str | Path) -> Path:
        """Write the viewer as one HTML file that opens in any browser, offline."""
        path = Path(path)
        path.write_text(self.html(page=True), encoding="utf-8")
        return path


def show(translator, text: str, options: DecodingOptions | None = None, familiarity: Familiarity | None = None,
         server: str | None = None) -> Shown:
    """Translate `text` (any German, paragraphs too) and return its viewer; `familiarity`
    (lens.alarm.load_familiarity) adds what the training data says of each German word."""
    options = options or DecodingOptions(max_new_tokens=min(128, translator.config.max_len))
    start = time.perf_counter()
    result = explain_text(translator, text, options, PAGE)
    payload = page_payload(result, translator.config, time.perf_counter() - start, translator.device.type, familiarity)
    return Shown(payload, server)
