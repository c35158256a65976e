"""Is this German at all? The check that comes before "which kind of German".

Both models read German and nothing else: Chinese, English or a row of emoji still gets a "translation", and
the page must say, in the visitor's language, that the text does not look like German. Three tests, in order:
- no letters (emoji, digits, punctuation only): not German;
- most letters outside the Latin script (Chinese, Japanese, Cyrillic ...): not German;
- a naive Bayes guess of German against English from the two sides of the training pairs (the words each side
  uses most, `language.json.gz` beside the default checkpoint): a text whose words read like English
  ("the", "is", "where") is not German. A text of words seen on neither side is German: the benefit of the doubt.

The threshold and the number of words kept were chosen on a set built for it (German from the two dev sets
against English from the dev sets' references and this repository's docs, Chinese sentences written for it,
emoji and digits): recipes/everyday/route.py reports its precision and recall. `python -m training.language`
writes the file.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from model.checkpoint.json_file import write_json_gz

from .checked_json import (
    checked_object,
    checked_two_way_counts,
    optional,
    read_json,
    refused,
)

LANGUAGE_FILE = "language.json.gz"
FORMAT = 1
LANGUAGES = ("de", "en")
KEPT_WORDS = 5000  # per language: the words each side uses most (chosen on the dev set: docs/everyday.md)
MAX_FILE_BYTES = 4 << 20  # decompressed; the shipped file is about 0.2 MB
MAX_DEPTH = 3  # the file -> counts -> one word's two counts
LATIN_SHARE = 0.7  # below this share of Latin letters a text is not German ("我喜欢Python编程" included)
OFF = "the page does not check whether a text is German"
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")


def words(text: str) -> list[str]:
    """The words of a text, lowercased (training_data/evidence.py's rule)."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def latin(ch: str) -> bool:
    """A letter of the Latin script (ä, ß and é included)."""
    return unicodedata.name(ch, "").startswith("LATIN")


def build_counts(german: list[str], english: list[str], kept: int = KEPT_WORDS, smoothing: float = 0.5) -> dict:
    """The file's content: the `kept` words each side uses most, with their counts on both sides."""
    sides = [Counter(w for sentence in side for w in words(sentence)) for side in (german, english)]
    vocabulary = sorted({w for side in sides for w, _ in side.most_common(kept)})
    return {
        "format": FORMAT,
        "languages": list(LANGUAGES),
        "smoothing": smoothing,
        "threshold": 0.0,
        "counts": {w: [sides[0][w], sides[1][w]] for w in vocabulary},
    }


def write_counts(folder: str | Path, content: dict) -> Path:
    return write_json_gz(Path(folder) / LANGUAGE_FILE, content)


@dataclass(frozen=True)
class LanguageCheck:
    """A loaded table: per word log P(word | German) - log P(word | English)."""

    ratios: dict[str, float]
    threshold: float = 0.0

    def log_odds(self, text: str) -> float:
        """German against English; words in neither list count 0."""
        return sum(self.ratios.get(w, 0.0) for w in words(text))

    def report(self, text: str, shown: int = 3) -> dict:
        """`german` (true or false), `why` ("no letters", "script", "english" or "" for German) and the words
        that said English."""
        letters = [c for c in text if c.isalpha()]
        if not letters:
            return {"german": False, "why": "no letters", "words": []}
        if sum(map(latin, letters)) < LATIN_SHARE * len(letters):
            return {"german": False, "why": "script", "words": []}
        if self.log_odds(text) < self.threshold:
            english = sorted({w for w in words(text) if self.ratios.get(w, 0.0) < 0}, key=lambda w: (self.ratios[w], w))
            return {"german": False, "why": "english", "words": english[:shown]}
        return {"german": True, "why": "", "words": []}

    def german(self, text: str) -> bool:
        return self.report(text)["german"]


def check_from(content: dict) -> LanguageCheck:
    """The table of checked content (read_language's or build_counts')."""
    a = content["smoothing"]
    size = len(content["counts"]) + 1
    totals = [sum(c[k] for c in content["counts"].values()) + a * size for k in (0, 1)]
    ratios = {
        w: math.log((g + a) / totals[0]) - math.log((e + a) / totals[1]) for w, (g, e) in content["counts"].items()
    }
    return LanguageCheck(ratios, content["threshold"])


def read_language(path: str | Path) -> LanguageCheck:
    """The table in `path`, checked entry by entry; anything wrong is a CheckpointFileError naming the file."""
    content = checked_object(
        read_json(path, MAX_FILE_BYTES, MAX_DEPTH, gzipped=True),
        path,
        "the file",
        ("format", "languages", "smoothing", "threshold", "counts"),
    )
    if content["format"] != FORMAT:
        raise refused(path, "format", content["format"], f"{FORMAT}")
    if content["languages"] != list(LANGUAGES):
        raise refused(path, "languages", content["languages"], f"{list(LANGUAGES)}")
    return check_from(checked_two_way_counts(content, path))


def _checked(model_id: str | Path, revision: str | None) -> tuple[Path, LanguageCheck] | None:
    """A checkpoint's language file and its check, read once, or None where it has none or the file is refused
    (one warning that names it)."""
    from model.checkpoint.hub import resolve_file

    try:
        path = Path(resolve_file(model_id, LANGUAGE_FILE, revision=revision))
    except Exception:  # noqa: BLE001 - absent in this checkpoint, or the Hub unreachable: go without
        return None
    check = optional(lambda: read_language(path), OFF)
    return None if check is None else (path, check)


def language_file(model_id: str | Path, revision: str | None = None) -> Path | None:
    """The checked language file of a checkpoint folder or Hub repo (the page's own check reads a copy), or None."""
    found = _checked(model_id, revision)
    return found and found[0]


def load_language(model_id: str | Path, revision: str | None = None) -> LanguageCheck | None:
    """The check of a checkpoint, or None where it has none; a refused file is one warning that names it."""
    found = _checked(model_id, revision)
    return found and found[1]
