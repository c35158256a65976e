"""German written all in lowercase (or all in capitals) given back its capitals, from the training data's counts.

Both models learned from properly written German: "Bier" with a capital, as every German noun. The tutorials
write "ich möchte ein bier", and a model that never saw "bier" translates it badly. So a text with no capital
letter at all (or none but capitals) is recased before it is translated: each word takes the spelling the
training sentences used most for it inside a sentence ("bier" -> "Bier": "Bier" 77 times, "bier" never), and the
first word of a sentence takes a capital. A word the training data never saw keeps its letters (in capitals:
a capital and then lowercase, as most German words that are unknown are nouns). Text with mixed case is left
exactly as written: a properly written caption is never changed.

The counts are those of the default checkpoint's domain file (training_data/domain.py counts every token of the German
training sentences as written, and separately the first token of each), so no other file is needed; the page
does the same in ui/static/router.js.

    from training_data.truecase import load_truecaser
    load_truecaser("checkpoints/de-en").recase("ich möchte ein bier")  # ("Ich möchte ein Bier", [("ich", "Ich"), ...])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_WORD = re.compile(r"[^\W\d_]+")
FIRST = "<first>"
_SENTENCE_END = re.compile(r"[.!?…。！？]")


def uncased(text: str) -> str | None:
    """ "lower" where the text's cased letters are all lowercase, "upper" where all are capitals (two at least),
    else None: the text is written with capitals where the writer put them."""
    cased = [c for c in text if c.lower() != c.upper()]
    if len(cased) < 2 and not (cased and cased[0].islower()):
        return None
    if all(c.islower() for c in cased):
        return "lower"
    if all(c.isupper() for c in cased):
        return "upper"
    return None


@dataclass(frozen=True)
class Truecaser:
    """Per lowercased word, the spelling the training sentences used most for it inside a sentence."""

    spelling: dict[str, str]

    @classmethod
    def from_counts(cls, counts: dict[str, list[int]]) -> Truecaser:
        """From a domain file's counts: a token's count minus its count as a first token is its count inside."""
        inside: dict[str, tuple[int, str]] = {}
        for token, pair in counts.items():
            if token.startswith("<") or not _WORD.fullmatch(token):
                continue
            n = sum(pair) - sum(counts.get(FIRST + token, (0, 0)))
            key = token.lower()
            if n > 0 and (key not in inside or (n, token) > inside[key]):
                inside[key] = (n, token)
        return cls({key: token for key, (_, token) in inside.items()})

    def recase(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """The text recased where it is written in one case, and each word changed ((as written, as recased));
        text with mixed case comes back as it is, with no change. A word after a sentence's end mark starts a
        sentence: "wo ist er? ein hund." -> "Wo ist er? Ein Hund."."""
        case = uncased(text)
        if case is None:
            return text, []
        changes: list[tuple[str, str]] = []
        out, end = [], 0
        for match in _WORD.finditer(text):
            between = text[end : match.start()]
            at_start = end == 0 or bool(_SENTENCE_END.search(between))
            word = match.group(0)
            known = self.spelling.get(word.lower())
            form = known or (word.lower() if case == "lower" else word.capitalize())
            if at_start or (case == "upper" and known is None):
                form = form[:1].upper() + form[1:]
            if form != word:
                changes.append((word, form))
            out.append(between + form)
            end = match.end()
        out.append(text[end:])
        return "".join(out), changes


def word_changes(written: str, read: str) -> list[tuple[str, str]]:
    """The words of `read` spelled otherwise in `written` (the same words in the same order, recased)."""
    before, after = _WORD.findall(written), _WORD.findall(read)
    if len(before) != len(after):
        return []
    return [(a, b) for a, b in zip(before, after) if a != b]


def load_truecaser(model_id: str | Path, revision: str | None = None) -> Truecaser | None:
    """The truecaser of a checkpoint's domain file, or None where it has none (a refused file: training_data/domain.py's warning)."""
    from .domain import checked_domain

    found = checked_domain(model_id, revision)
    return None if found is None else Truecaser.from_counts(found[1]["counts"])
