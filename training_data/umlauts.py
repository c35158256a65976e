"""German typed without umlauts or ß given them back, from the training data's counts.

A keyboard without them writes "ich mochte ein bier", "fur", "Strasse" or "moechte"; the models learned "möchte",
"für", "Straße" and translate the bare letters badly ("mochte": "I put"). A word is restored when the training
sentences never used it as typed but used exactly one spelling with ä, ö, ü or ß whose letters, written the plain
way (ä as a or ae, ö as o or oe, ü as u or ue, ß as ss), are the typed ones; the most frequent such spelling wins.
A text that has an umlaut or ß anywhere is left as it is (its writer has them), and so is every word the training
data knows as typed ("schon" stays "schon", though "schön" exists). The counts are the default checkpoint's domain
file's, as for recasing (truecase.py); the page does the same in ui/static/router.js.

    Umlauts.from_counts(counts).restore("ich mochte fur dich")  # ("ich möchte für dich", [("mochte", "möchte"), ...])
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[^\W\d_]+")
SPECIAL = re.compile("[äöüÄÖÜß]")
PLAIN = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss"})
DIGRAPHS = (("ae", "a"), ("oe", "o"), ("ue", "u"))
MIN_COUNT = 2  # a spelling seen once may be a typo of the training data


def plain(word: str) -> str:
    """A lowercase word as a keyboard without umlauts writes it with single letters: 'straße' -> 'strasse'."""
    return word.lower().translate(PLAIN)


def with_case_of(typed: str, word: str) -> str:
    """`word` (lowercase) in the case of `typed`: all capitals, a first capital, or lowercase."""
    if typed.isupper() and len(typed) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if typed[:1].isupper() else word


@dataclass(frozen=True)
class Umlauts:
    """`spelling`: per plain key, the lowercase spelling with umlauts the training data used most; `known`: every
    lowercase word it used."""

    spelling: dict[str, str]
    known: frozenset[str]

    @classmethod
    def from_counts(cls, counts: dict[str, list[int]]) -> Umlauts:
        totals: dict[str, int] = {}
        for token, pair in counts.items():
            if not token.startswith("<") and _WORD.fullmatch(token):
                totals[token.lower()] = totals.get(token.lower(), 0) + sum(pair)
        best: dict[str, tuple[int, str]] = {}
        for word, n in totals.items():
            if SPECIAL.search(word) and n >= MIN_COUNT and (n, word) > best.get(plain(word), (0, "")):
                best[plain(word)] = (n, word)
        return cls({key: word for key, (_, word) in best.items()}, frozenset(totals))

    def restored(self, word: str) -> str | None:
        """The spelling with umlauts of a typed word, or None where it keeps its letters."""
        low = word.lower()
        if low in self.known:
            return None
        found = self.spelling.get(low)
        if found is None:
            undone = low
            for pair, single in DIGRAPHS:
                undone = undone.replace(pair, single)
            found = self.spelling.get(undone) if undone != low else None
        return with_case_of(word, found) if found else None

    def restore(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """The text with each typed word restored, and the changes ((as typed, as read)); a text that has an umlaut
        or ß comes back as it is."""
        if SPECIAL.search(text):
            return text, []
        changes: list[tuple[str, str]] = []

        def one(match: re.Match) -> str:
            found = self.restored(match.group(0))
            if found is None:
                return match.group(0)
            changes.append((match.group(0), found))
            return found

        return _WORD.sub(one, text), changes
