"""The page's header: its name, what it is and what the model learned from, the guided walk's button and the language
switch (中文 / English). Its texts are the catalogue's (ui/locales.py): locale.js writes them in the visitor's
language; the switch names each language in that language (lang= on each). The glossary opens from the picture's
whole-model list and from every underlined term (glossary.js)."""

from __future__ import annotations

from html import escape

from training_data.provenance import Provenance
from ui.locales import html, message

# Each locale's own name for itself, on its button of the switch.
LANGUAGE_NAMES = {"zh-CN": "中文", "en": "English"}


def language_switch() -> str:
    """The switch: one button that names both languages, the page's own in bold; a click opens the page in the other
    (locale.js)."""
    names = " / ".join(f"<span lang='{code}'>{name}</span>" for code, name in LANGUAGE_NAMES.items())
    return f"<button type='button' class='al-lang' translate='no'>{names}</button>"


def header(learned: Provenance, in_browser: str | None, static_site: str | None = None) -> str:
    """The header's HTML; `in_browser`: the URL of the model files for "compute in my browser" (None: no choice);
    `static_site`: the address of the same lens as a static site (python -m ui.export_site --push-to-hub), linked."""
    # tour.js writes the walk's button in the page's language (and "resume at stop n" once one is left)
    walk = f"<button type='button' class='al-tour-start'>{message('app.header.walk')}</button>"
    free = ""
    if static_site:
        free = " " + html("app.header.static", "a", f"href='{escape(static_site, quote=True)}' class='al-static-link'")
    return (
        f"<header id='page-header' data-in-browser='{in_browser or ''}'><h1>Attention Lens</h1>{language_switch()}"
        f"<p>{html('app.header.lead', 'span')} {html(f'app.provenance.{learned}', 'b')} {walk}{free}</p>"
        "</header>"
    )
