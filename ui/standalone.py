"""The viewer outside the app: a translation and every map of it, drawn in a notebook cell or a saved file.

    from ui.standalone import show
    show(translator, "Ein Hund rennt.")           # in Jupyter: the cell draws the viewer
    show(translator, "Ein Hund rennt.").save("dog.html")

The cell is self-contained, the way bertviz's are: the viewer's modules and styles (ui/static/, the
same files the page loads, its modules bundled into one script: `bundle`) and the payload (ui/payload.py, the same one the page draws) are inlined,
so it needs no server and no network. The buttons that ask the model more (how a weight was computed,
when a word was decided) need a running app: pass its address as `server=` and they call its API;
without one they are hidden.
"""

from __future__ import annotations

import html
import json
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from lens.cost import PAGE
from lens.explain import DecodingOptions, explain_text
from training_data.alarm import Familiarity

from .payload import page_payload

VIEWER = Path(__file__).resolve().parent.parent / "ui" / "static"  # the page's own modules and styles
VIEWER_ENTRY = "result.js"  # the translate view's result (mountStandalone) and what it imports
VIEWER_STYLES = ("lens.css", "spine.css")  # the page's own stylesheets: a notebook figure looks like the page
IMPORT = re.compile(r'^import (?:\{ ([^}]*) \} from |(\w+) from )?"\./([\w./-]+)"(?: with \{ type: "json" \})?;$', re.M)
# import("./x.js") when it runs, or a file fetched by its URL beside the module (a worker, a table)
DYNAMIC_IMPORT = re.compile(r'\bimport\("\./([\w.]+)"\)|\bnew URL\("\./([\w.]+)", import\.meta\.url\)')
EXPORT = re.compile(r"^export (?:async )?(?:function|class|const) (\w+)", re.M)
EXPORT_LIST = re.compile(r"^export \{ ([^}]*) \};$", re.M)


def imports(name: str, dynamic: bool = False) -> list[str]:
    """The page modules module `name` (ui/static/NAME) imports, in order; with `dynamic`, those it imports
    when it runs (import("./x.js")) too."""
    if name.endswith(".json"):  # a JSON module (the message catalogues) imports nothing
        return []
    code = (VIEWER / name).read_text(encoding="utf-8")
    found = [m.group(3) for m in IMPORT.finditer(code)]
    return found + ([a or b for a, b in DYNAMIC_IMPORT.findall(code)] if dynamic else [])


def page_modules(entry: str, dynamic: bool = False) -> list[str]:
    """Every module `entry` needs, each after the ones it imports (the page's modules import no circle)."""
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise ValueError(f"the page modules import in a circle: {' -> '.join(path + (name,))}")
        if name in order:
            return
        for needed in imports(name, dynamic):
            visit(needed, path + (name,))
        order.append(name)

    visit(entry, ())
    return order


def _as_function(name: str) -> str:
    """Module `name` as a function of the modules before it that returns its exports (a JSON module: its value)."""
    code = (VIEWER / name).read_text(encoding="utf-8")
    if name.endswith(".json"):
        return f'modules["{name}"] = {json.dumps(json.loads(code), ensure_ascii=False)};'
    if DYNAMIC_IMPORT.search(code):
        raise ValueError(f"{name} imports a module when it runs: it cannot be bundled")
    exported = [(n, n) for n in EXPORT.findall(code)]  # (the name outside, the name inside)
    for listed in EXPORT_LIST.findall(code):
        exported += [
            (outer or inner, inner) for inner, _, outer in (item.partition(" as ") for item in listed.split(", "))
        ]
    code = re.sub(r"^export ", "", EXPORT_LIST.sub("", code), flags=re.M)

    def imported(m: re.Match) -> str:
        names, default, path = m.group(1), m.group(2), m.group(3)
        if default:  # a JSON module's value
            return f'const {default} = modules["{path}"];'
        return f'const {{ {names.replace(" as ", ": ")} }} = modules["{path}"];' if names else ""

    code = IMPORT.sub(imported, code)
    returned = ", ".join(inner if outer == inner else f"{outer}: {inner}" for outer, inner in exported)
    return f'modules["{name}"] = (function () {{\n{code}\nreturn {{ {returned} }};\n}})();'


def bundle(entry: str) -> str:
    """`entry` and every module it imports as one classic script: a function body that returns the modules by
    name (a notebook cell cannot import modules by URL; each cell gets its own copy, its own store)."""
    parts = [_as_function(name) for name in page_modules(entry)]
    return '"use strict";\nconst modules = {};\n' + "\n".join(parts) + "\nreturn modules;"


@dataclass
class Shown:
    """One explanation ready to draw: `_repr_html_()` for notebooks, `save()` for a file."""

    payload: dict
    server: str | None = None  # a running app's address, for the buttons that call its API
    lang: str | None = None  # "en" or "zh-CN" (ui.locales.LOCALES); None: the browser's language

    def html(self, page: bool = False) -> str:
        """The viewer as HTML: a fragment (a notebook cell), or with `page` a whole document."""
        root = f"al-show-{uuid.uuid4().hex[:10]}"
        styles = "\n".join((VIEWER / name).read_text(encoding="utf-8") for name in VIEWER_STYLES)
        modules = re.sub(r"</(script)", r"<\\/\1", bundle(VIEWER_ENTRY), flags=re.I)  # no early </script>
        data = json.dumps(self.payload, separators=(",", ":")).replace("</", "<\\/")  # no early </script>
        server = json.dumps(self.server).replace("</", "<\\/")
        lang = json.dumps(self.lang)
        fragment = (
            f'<style>{styles}</style>\n<div id="{root}" class="al-show"></div>\n<script>(function () {{\n'
            f"const modules = (function () {{\n{modules}\n}})();\n"
            f'modules["{VIEWER_ENTRY}"].mountStandalone(document.getElementById("{root}"), {data}, {server}, {lang});\n'
            "})();</script>"
        )
        if not page:
            return fragment
        title = html.escape(" ".join(s["source"] for s in self.payload["sentences"])[:80] or "Attention Lens")
        return (
            f'<!doctype html>\n<html lang="{self.lang or "en"}"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>{title}</title></head>\n'
            f'<body style="font-family: system-ui, sans-serif; margin: 1rem">\n{fragment}\n</body></html>\n'
        )

    def _repr_html_(self) -> str:
        return self.html()

    def save(self, path: str | Path) -> Path:
        """Write the viewer as one HTML file that opens in any browser, offline."""
        path = Path(path)
        path.write_text(self.html(page=True), encoding="utf-8")
        return path


def show(
    translator,
    text: str,
    options: DecodingOptions | None = None,
    familiarity: Familiarity | None = None,
    server: str | None = None,
    lang: str | None = None,
) -> Shown:
    """Translate `text` (any German, paragraphs too) and return its viewer; `familiarity`
    (training_data.alarm.load_familiarity) adds what the training data says of each German word; `lang` ("en",
    "zh-CN") the language it speaks (None: the browser's)."""
    locales = sorted(p.stem for p in (VIEWER / "messages").glob("*.json"))
    if lang is not None and lang not in locales:
        raise ValueError(f"lang must be one of {', '.join(locales)} or None, got {lang!r}")
    options = options or DecodingOptions(max_new_tokens=min(128, translator.config.max_len))
    start = time.perf_counter()
    result = explain_text(translator, text, options, PAGE)
    payload = page_payload(result, translator.config, time.perf_counter() - start, translator.device.type, familiarity)
    return Shown(payload, server, lang)
