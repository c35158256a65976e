"""German text -> sentences, for a model trained on single sentences.

A full stop ends a sentence only when it is not part of an abbreviation ("z. B.", "Dr.", "usw."),
an ordinal or date ("1. Mai", "der 3. Platz"), a decimal number ("3.5") or an initial ("J. S.
Bach"), and when what follows looks like the start of a new sentence (a capital, a digit, an
opening quote, or a letter of a script without capitals such as Chinese). After a number of one or two digits it ends one when a word that starts sentences
follows ("Ich bin 25. Ich wohne in Berlin."), unless a month follows or an article comes before. A line break always ends a sentence: captions and lists come one per line.
The full-width marks of Chinese and Japanese text ("。", "！", "？", "．") end a sentence whatever follows: those
scripts put no space after them.
"""

from __future__ import annotations

import re

# Lower-cased, without their final full stop. Single letters ("z", "B", "d", "h") count as
# abbreviations or initials anyway; these are the longer ones a German text is likely to use.
ABBREVIATIONS = frozenset(
    """
    abb abs abt allg anm bd bzgl bzw ca chr co dgl di dipl do dr ehem etc evtl fa ff fr frl gebr gegr
    ggf hl hr hrn inkl ing jh jhd jr kap kath kfz lt mi mio mo mrd nr phil pkt prof rd reg sa sen so
    sog st std str tel u.a usw vgl vs z.b zb zt ca bspw mind max min geb gest
""".split()
)
ENDINGS = re.compile(r"[.!?…。！？．]+[\"'“”»«‚‘’)\]」』）]*")  # the end mark, then any closing quotes/brackets
FULL_WIDTH = frozenset("。！？．")  # end a sentence with no space after them
OPENERS = "\"'„“‚‘»«(["
MONTHS = frozenset("januar jänner februar märz april mai juni juli august september oktober november dezember".split())
# Words before which "3." is an ordinal ("der 3. Platz", "am 1. Mai", "zum 2. Mal").
BEFORE_ORDINALS = frozenset(
    """
    der die das dem den des am im zum zur vom beim ab bis seit vor nach ihr ihre sein seine mein meine dein
    deine unser unsere euer eure jeder jede jedes ein eine einem einen einer
""".split()
)
# Words that start a sentence far more often than they follow an ordinal: "Ich bin 25. Ich wohne ...".
SENTENCE_STARTERS = frozenset(
    """
    ich du er sie es wir ihr man das der die dies diese dieser mein meine dein deine unser unsere und aber
    dann danach jetzt heute morgen gestern hier dort da wo wie was wann warum wer bitte danke ja nein
    seitdem damals trotzdem deshalb also
""".split()
)


def _ends_sentence(text: str, end: int, mark: str) -> bool:
    """Whether the end mark `mark` that stops at `end` closes a sentence."""
    rest = text[end:]
    if any(c in FULL_WIDTH for c in mark):
        return True  # "你好。我是学生。": no space follows, yet each mark ends a sentence
    if not rest[:1].isspace():
        return False  # "3.5", "usw.)", "www.example.de": no space, no sentence end
    following = rest.lstrip()
    if not following:
        return True
    first = following[0]
    if not (
        first.isupper() or first.isdigit() or first in OPENERS or (first.isalpha() and first.lower() == first.upper())
    ):
        return False  # "Hallo!" rief er.  /  "... usw. und so fort"
    if not mark.startswith("."):
        return True  # ! ? … end a sentence before a capital
    last = re.search(r"(\S+)$", text[: end - len(mark)])
    if last is None:
        return True
    word = last.group(1).lstrip(OPENERS).lower()
    if word.isdigit():
        return len(word) > 2 or _number_ends_sentence(text[: end - len(mark) - len(word)], following)
    if len(word) == 1 and word.isalpha():
        return False  # "z. B.", "J. S. Bach": a single letter and a full stop is an abbreviation
    return word not in ABBREVIATIONS


def _number_ends_sentence(before: str, following: str) -> bool:
    """Whether a full stop after a number of one or two digits ends a sentence rather than an ordinal:
    "Ich bin 25. Ich wohne in Berlin." ends; "am 1. Mai", "der 3. Platz" and "1. Mai" do not ("im Jahr
    1990." always ends: no ordinal has more than two digits)."""
    previous = re.search(r"(\w+)\W*$", before)
    found = re.match(r"\w+", following)
    next_word = found.group(0).lower() if found else ""
    if next_word in MONTHS or (previous and previous.group(1).lower() in BEFORE_ORDINALS):
        return False
    return next_word in SENTENCE_STARTERS


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
