"""The page's header: its name, what it is and what the model learned from, the guided walk's button, the glossary
and the language switch (中文 / English). Its texts are the catalogue's (ui/locales.py): locale.js writes them in the
visitor's language, and the switch's two buttons name their language in that language (lang= on each)."""

from __future__ import annotations

from training_data.provenance import Provenance
from ui.locales import html, message

# Each locale's own name for itself, on its button of the switch.
LANGUAGE_NAMES = {"zh-CN": "中文", "en": "English"}


def language_switch() -> str:
    """The switch: one button a locale, the page's own pressed (locale.js sets aria-pressed and follows a click)."""
    buttons = "".join(
        f"<button type='button' class='al-lang-choice' data-lang='{code}' lang='{code}' aria-pressed='false'>"
        f"{name}</button>"
        for code, name in LANGUAGE_NAMES.items()
    )
    return f"<span class='al-lang' role='group' aria-label='Language / 语言' translate='no'>{buttons}</span>"


def header(learned: Provenance, in_browser: str | None) -> str:
    """The header's HTML; `in_browser`: the URL of the model files for "compute in my browser" (None: no choice)."""
    # tour.js writes the walk's button in the page's language (and "resume at stop n" once one is left)
    walk = f"<button type='button' class='al-tour-start'>{message('app.header.walk')}</button>"
    glossary = html("app.header.glossary", "button", "type='button' class='al-glossary-open'")
    return (
        f"<header id='page-header' data-in-browser='{in_browser or ''}'><h1>Attention Lens</h1>{language_switch()}"
        f"<p>{html('app.header.lead', 'span')} {html(f'app.provenance.{learned}', 'b')} {walk} {glossary}</p>"
        "</header>"
    )
