"""Message catalogues as parallel text: a German `.mo` file pairs each English msgid with its msgstr.

    read_mo(path)          -> [Message]: context, singular, plural, translations, as the file holds them
    catalogue_pairs(path)  -> Extraction: the (German, English) pairs one catalogue gives, and what was dropped

The rules, the same for every catalogue (software, office suite, games):
- plural forms stay apart: msgid -> msgstr[0], msgid_plural -> msgstr[1] (German has two forms);
- the context (`msgctxt`, and a game's `female^` prefix) is dropped;
- accelerators (`_File`, `&File`, `~File`), format placeholders (`%s`, `%1$d`, `%(name)s`, `{0}`, `$name`,
  `%PRODUCTNAME`, `$(ARG1)`) and markup (`<b>`, `<span ...>`, `&amp;`) are stripped;
- a text of several lines is paired line by line when both sides have as many lines, else joined;
- command-line help (lines starting with `-`, columns of spaces) and entries that are only a variable, a
  path or a symbol (`%s`, `/etc/fstab`, `GTK_THEME`, `--force`, `...`) are dropped, as are untranslated
  entries (the German equal to the English) and the header.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

MO_MAGIC = (0x950412DE, 0xDE120495)
MAX_WORDS = 60  # longer entries are documentation paragraphs: the model never sees sentences this long


class CatalogueError(ValueError):
    """A file that is not a readable .mo catalogue."""


@dataclass(frozen=True)
class Message:
    context: str | None
    singular: str
    plural: str | None
    translations: tuple[str, ...]


@dataclass
class Extraction:
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (German, English)
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def offer(self, pair: tuple[str, str], seen: set) -> None:
        """Keep a cleaned pair unless it is no training pair (problem) or was kept before; count why not."""
        if (why := problem(*pair)) or pair in seen:
            self.drop(why or "duplicate")
            return
        seen.add(pair)
        self.pairs.append(pair)


def read_mo(path: Path | str) -> list[Message]:
    """Every entry of a GNU .mo file (either byte order), decoded as UTF-8."""
    raw = Path(path).read_bytes()
    if len(raw) < 20:
        raise CatalogueError(f"{path}: too short for a .mo file")
    for order in "<>":
        magic, _revision, count, originals, translations = struct.unpack(order + "5I", raw[:20])
        if magic == MO_MAGIC[0]:
            break
    else:
        raise CatalogueError(f"{path}: not a .mo file (bad magic number)")
    entries = [
        (_bytes(raw, order, originals, i, path), _bytes(raw, order, translations, i, path)) for i in range(count)
    ]
    charset = _charset(entries)
    try:
        return [_message(original.decode(charset), translated.decode(charset)) for original, translated in entries]
    except (UnicodeDecodeError, LookupError) as err:
        raise CatalogueError(f"{path}: not readable as {charset} ({err})") from None


def _bytes(raw: bytes, order: str, table: int, index: int, path) -> bytes:
    try:
        length, offset = struct.unpack_from(order + "2I", raw, table + 8 * index)
    except struct.error as err:
        raise CatalogueError(f"{path}: entry {index} unreadable ({err})") from None
    if offset + length > len(raw):
        raise CatalogueError(f"{path}: entry {index} runs past the end of the file")
    return raw[offset : offset + length]


def _charset(entries: list[tuple[bytes, bytes]]) -> str:
    """The encoding the header entry (the empty msgid) names; UTF-8 without one."""
    header = next((translated for original, translated in entries if original == b""), b"")
    found = re.search(rb"charset=([\w.-]+)", header)
    return found.group(1).decode("ascii") if found and found.group(1).upper() != b"CHARSET" else "utf-8"


def _message(original: str, translated: str) -> Message:
    context, _, original = original.rpartition("\x04") if "\x04" in original else (None, "", original)
    singular, *plural = original.split("\x00")
    return Message(context, singular, plural[0] if plural else None, tuple(translated.split("\x00")))


# ----- the rules ---------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"(?<!\d)%(?:\d+\$)?[-+#0']*\d*(?:\.\d+)?(?:hh|h|ll|l|L|q|j|z|t|I64|I32|PRI\w+)?[diouxXeEfFgGaAcspnm%]"  # printf
    r"|%\([A-Za-z_]\w*\)[a-z]"  # python %(name)s
    r"|%[A-Z][A-Z0-9_]+%?"  # %PRODUCTNAME
    r"|%\d+"  # Qt / LibreOffice %1
    r"|\$\([A-Za-z0-9_]+\)"  # $(ARG1)
    r"|\$\{[^}]*\}|\$[A-Za-z_][\w.|]*"  # ${name}, $unit.name
    r"|\{[A-Za-z0-9_]*(?::[^{}]*)?\}"  # {0}, {name}, {count:d}
    r"|<[^<>]*>"  # markup
)
_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'", "&nbsp;": " "}
_ACCELERATOR = re.compile(r"(?<![\w&])[_&~](?=\w)|(?<=\w)[_~](?=\w)|(?<=\w)&(?=\w)")
_GAME_CONTEXT = re.compile(r"^[a-z_]+\^")  # Wesnoth's "female^", "race^"
_QUOTES = str.maketrans(
    {
        "„": '"',
        "“": '"',
        "”": '"',
        "»": '"',
        "«": '"',
        "‚": "'",
        "‘": "'",
        "’": "'",
        "…": "...",
        "\u00a0": " ",
        "\u2011": "-",
        "\u2010": "-",
    }
)
_PATH = re.compile(r"^[~.]?/\S*$|^\S*/\S*\.\w+$|^\w+://")
_SYMBOL = re.compile(r"^[\W\d_]*$|^[A-Za-z0-9]+(?:[_:.=]+[A-Za-z0-9]+)+$|^-")
_HELP_LINE = re.compile(r"^\s*-|\S\s{3,}\S")


def clean(text: str) -> str:
    """One line of a catalogue text as a sentence: no context prefix, accelerators, placeholders or markup."""
    text = _GAME_CONTEXT.sub("", text)
    text = _PLACEHOLDER.sub(" ", text)
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    text = _ACCELERATOR.sub("", text).translate(_QUOTES)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?)])", r"\1", text)  # "open :" after a placeholder went
    text = re.sub(r"\(\s*\)|\"\s*\"|'\s*'", "", text)  # emptied brackets and quotes
    return re.sub(r"\s+", " ", text).strip(" ,;:")


def problem(de: str, en: str) -> str | None:
    """Why a cleaned pair is no training pair, or None."""
    if not de or not en:
        return "empty after cleaning"
    if de == en:
        return "untranslated"
    for side in (de, en):
        if _PATH.search(side) or _SYMBOL.search(side) or side.upper() == side or not re.search(r"[^\W\d_]{2}", side):
            return "only a variable, a path or a symbol"
    if max(len(de.split()), len(en.split())) > MAX_WORDS:
        return "too long"
    return None


def _lines(de: str, en: str) -> list[tuple[str, str]] | None:
    """Aligned lines of a text pair; None when it is command-line help."""
    de_lines = [line for line in de.split("\n") if line.strip()]
    en_lines = [line for line in en.split("\n") if line.strip()]
    if any(_HELP_LINE.search(line) for line in en_lines):
        return None
    if len(de_lines) == len(en_lines):
        return list(zip(de_lines, en_lines))
    return [(" ".join(de_lines), " ".join(en_lines))]


def message_texts(message: Message) -> list[tuple[str, str]]:
    """(German, English) texts of an entry: one, or two for a plural (singular and plural apart)."""
    if not message.singular or not any(message.translations):
        return []
    texts = [(message.translations[0], message.singular)]
    if message.plural is not None and len(message.translations) > 1:
        texts.append((message.translations[1], message.plural))
    return texts


def catalogue_pairs(path: Path | str) -> Extraction:
    """The deduplicated (German, English) pairs of one German catalogue, in file order."""
    found, seen = Extraction(), set()
    for message in read_mo(path):
        texts = message_texts(message)
        if not texts:
            found.drop("header or untranslated")
        for de_text, en_text in texts:
            lines = _lines(de_text, en_text)
            if lines is None:
                found.drop("command-line help")
                continue
            for de, en in lines:
                found.offer((clean(de), clean(en)), seen)
    return found
