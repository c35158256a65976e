"""LibreOffice's help as parallel text: the German and the US English help pages, paragraph by paragraph.

Both packages (`libreoffice-help-de`, `libreoffice-help-en-us`) ship the same HTML pages under
`usr/share/libreoffice/help/<lang>/text/...`, whose paragraphs and headings carry the same ids
(`<p id="par_id3146957">`, `<h1 id="hd_id3150443">`). A pair is the text of one id of one page in both
languages; ids found in one language only, and texts that are no prose (a path, a symbol, a shortcut), are
dropped with a count.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from .catalogues import Extraction

HELP_ROOT = Path("usr/share/libreoffice/help")
_TEXT_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "td", "li"}
_VOID_TAGS = {"br", "img", "input", "hr", "meta", "link", "wbr"}
_ID = re.compile(r"^(par|hd)_id\w+$")
_QUOTES = str.maketrans(
    {"„": '"', "“": '"', "”": '"', "»": '"', "«": '"', "‚": "'", "‘": "'", "’": "'", "…": "...", "\u00a0": " "}
)


class _Paragraphs(HTMLParser):
    """The text of every element with a paragraph or heading id, inline children included, the macOS
    variants of a text (`<span class="MAC">Command</span>` beside `Ctrl`) left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: dict[str, str] = {}
        self._open: list[tuple[str, str, list[str]]] = []  # (tag, id, text parts)
        self._inline: list[tuple[str, bool]] = []  # (tag, skipped) of the elements open inside a paragraph

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in _TEXT_TAGS and _ID.match(attrs.get("id") or ""):
            self._open.append((tag, attrs["id"], []))
        elif self._open and tag not in _VOID_TAGS:
            self._inline.append((tag, "MAC" in (attrs.get("class") or "").split()))

    def handle_endtag(self, tag):
        if self._inline and self._inline[-1][0] == tag:
            self._inline.pop()
        elif self._open and self._open[-1][0] == tag:
            _, ident, parts = self._open.pop()
            self._inline.clear()
            self.texts.setdefault(ident, re.sub(r"\s+", " ", "".join(parts)).strip())

    def handle_data(self, data):
        if self._open and not any(skipped for _, skipped in self._inline):
            self._open[-1][2].append(data)


def paragraphs(page: Path) -> dict[str, str]:
    """{id: text} of one help page."""
    parser = _Paragraphs()
    parser.feed(page.read_text(encoding="utf-8", errors="replace"))
    return parser.texts


def help_pairs(german_root: Path, english_root: Path) -> Extraction:
    """(German, English) pairs of the help pages present in both trees, aligned by paragraph id."""
    found, seen = Extraction(), set()
    for de_page in sorted(german_root.rglob("*.html")):
        en_page = english_root / de_page.relative_to(german_root)
        if not en_page.is_file():
            found.drop("page in German only")
            continue
        english = paragraphs(en_page)
        for ident, de in paragraphs(de_page).items():
            if ident not in english:
                found.drop("paragraph in German only")
                continue
            found.offer((de.translate(_QUOTES), english[ident].translate(_QUOTES)), seen)
    return found
