"""The page's words on the Python side: the texts the app's Python writes (labels, buttons, the header, each view's
introduction), read from the same catalogues as the page's modules, ui/static/messages/<locale>.json, under keys
that start with "app.".

Two ways in, one catalogue:
- a Gradio component's label, info, placeholder or button text is `label("app.translate.button")`, a key that
  Gradio's own i18n (`I18N`, passed to `launch(i18n=...)`) looks up in the browser's locale;
- an HTML block is `html("app.step.intro")`: the English text in an element marked `data-i18n`, which the page's
  locale.js rewrites in the visitor's language (placeholders travel in `data-i18n-values`).

    message("app.copylab.intro", seconds=60)   # the English text, placeholders filled
"""

from __future__ import annotations

import html as html_escape
import json
import re
from functools import cache
from pathlib import Path

import gradio as gr

MESSAGES = Path(__file__).resolve().parent / "static" / "messages"
LOCALES = ("en", "zh-CN")  # the first is the fallback: it has every message
PREFIX = "app."  # the keys of the texts Python writes; the rest are the modules' (ui/static/i18n.js)
PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def catalogue(locale: str = "en") -> dict[str, str]:
    """The messages of `locale` (one of LOCALES): key -> text."""
    if locale not in LOCALES:
        raise ValueError(f"locale must be one of {', '.join(LOCALES)}, got {locale!r}")
    return json.loads((MESSAGES / f"{locale}.json").read_text(encoding="utf-8"))


def message(key: str, locale: str = "en", **values) -> str:
    """The text of `key` in `locale` (English where it lacks one), each {name} filled from `values`; a key English
    lacks, or a placeholder without a value, raises a KeyError naming it."""
    text = catalogue(locale).get(key) or catalogue("en").get(key)
    if text is None:
        raise KeyError(f'no message "{key}" in {MESSAGES / "en.json"}')

    def fill(match: re.Match) -> str:
        if match[1] not in values:
            raise KeyError(f'message "{key}" needs a value for {{{match[1]}}}')
        return str(values[match[1]])

    return PLACEHOLDER.sub(fill, text)


def html(key: str, tag: str = "div", attributes: str = "", **values) -> str:
    """An element whose content is message `key` (HTML, English here), marked for the page to write it in the
    visitor's language: <div data-i18n="key" data-i18n-values='{...}'>...</div>."""
    marks = f' data-i18n="{key}"'
    if values:
        marks += f" data-i18n-values='{html_escape.escape(json.dumps(values), quote=True)}'"
    return f"<{tag}{' ' + attributes if attributes else ''}{marks}>{message(key, **values)}</{tag}>"


class Refused(ValueError):
    """A refusal in the app's words: message `key` with its `values`, where `words` name placeholders filled by a
    message of their own (e.g. what="app.what.step"). str() is the English; `said()` hands the page the key, so that
    it writes the refusal in the visitor's language."""

    def __init__(self, key: str, words: dict[str, str] | None = None, **values):
        self.key, self.words, self.values = key, dict(words or {}), values
        super().__init__(message(key, **values, **{name: message(word) for name, word in self.words.items()}))


def said(err: Exception, field: str = "error") -> dict:
    """What a view's answer says of `err`: {field: the English (at most 300 characters)}, and for a Refused its key,
    values and words (`<field>_key`, `<field>_values`, `<field>_words`), which the page writes in its language."""
    out: dict = {field: str(err)[:300]}
    if isinstance(err, Refused):
        out.update({f"{field}_key": err.key, f"{field}_values": err.values, f"{field}_words": err.words})
    return out


def app_messages(locale: str) -> dict[str, str]:
    """The "app." messages of `locale`: what Gradio's i18n looks up."""
    return {k: v for k, v in catalogue(locale).items() if k.startswith(PREFIX)}


I18N = gr.I18n(**{locale: app_messages(locale) for locale in LOCALES})


def english(text) -> str | None:
    """A component's label as English words: the message of a `label()` key, else the text as it is (None: none)."""
    if isinstance(text, gr.i18n.I18nData):
        return message(text.key)
    return text


def label(key: str) -> gr.i18n.I18nData:
    """A Gradio text (label, info, placeholder, a button's value) that Gradio writes in the visitor's language."""
    if key not in catalogue("en"):
        raise KeyError(f'no message "{key}" in {MESSAGES / "en.json"}')
    return I18N(key)
