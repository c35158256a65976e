"""German text -> sentences, for a model trained on single sentences.

A full stop ends a sentence only when it is not part of an abbreviation ("z. B.", "Dr.", "usw."),
an ordinal or date ("1. Mai", "der 3. Platz"), a decimal number ("3.5") or an initial ("J. S.
Bach"), and when what follows looks like the start of a new sentence (a capital, a digit or an
opening quote). A line break always ends a sentence: captions and lists come one per line.
"""

from __future__ import annotations

import re

# Lower-cased, without their final full stop. Single letters ("z", "B", "d", "h") count as
# abbreviations or initials anyway; these are the longer ones a German text is likely to use.
ABBREVIATIONS = frozenset("""
    abb abs abt allg anm bd bzgl bzw ca chr co dgl di dipl do dr ehem etc evtl fa ff fr frl gebr gegr
    ggf hl hr hrn inkl ing jh jhd jr kap kath kfz lt mi mio mo mrd nr phil pkt prof rd reg sa sen so
    sog st std str tel u.a usw vgl vs z.b zb zt ca bspw mind max min geb gest
""".split())
ENDINGS = re.compile(r"[.!?…]+[\"'“”»«‚‘’)\]]*")  # the end mark, then any closing quotes/brackets
OPENERS = "\"'„“‚‘»«(["


def _ends_sentence(text: str, end: int, mark: str) -> bool:
    """Whether the end mark `mark` that stops at `end` closes a sentence."""
    rest = text[end:]
    if not rest[:1].isspace():
        return False  # "3.5", "usw.)", "www.example.de": no space, no sentence end
    following = rest.lstrip()
    if not following:
        return True
    first = following[0]
    if not (first.isupper() or first.isdigit() or first in OPENERS):
        return False  # "Hallo!" rief er.  /  "... usw. und so fort"
    if not mark.startswith("."):
        return True  # ! ? … end a sentence before a capital
    word = re.search(r"(\S+)$", text[: end - len(mark)])
    if word is None:
        return True
    word = word.group(1).lstrip(OPENERS).lower()
    if word.isdigit():
        return len(word) > 2  # "1. Mai", "der 3. Platz" are ordinals; "im Jahr 1990." ends
    if len(word) == 1 and word.isalpha():
        return False  # "z. B.", "J. S. Bach": a single letter and a full stop is an abbreviation
    return word not in ABBREVIATIONS


def split_sentences(text: str) -> list[str]:
    """Split German text into sentences, each stripped; empty lines and blanks are dropped."""
    if not isinstance(text, str):
        raise TypeError(f"split_sentences expects text, got {type(text).__name__}")
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in ENDINGS.finditer(line):
            mark = match.group(0)
            if _ends_sentence(line, match.end(), mark):
                sentences.append(line[start : match.end()].strip())
                start = match.end()
        sentences.append(line[start:].strip())
    return [s for s in sentences if s]
