"""Evidence from the training data: how often each German word was seen in training, and where.

A model can only translate what it has seen. For each German word of a sentence, the index says
how often it occurs in each training corpus and shows up to three training pairs that contain it;
a word seen fewer than RARE_BELOW times is rare, one never seen is unseen. It also holds every pair
of neighbouring words seen in training: familiar words in unfamiliar company ("ich möchte", "wo ist"
in a corpus of photo captions) are a sign of another kind of German. The index is written
beside the weights by the training script (`evidence.json.gz`, a few MB) and read here.

Example pairs come from Multi30k only: the Ding dictionary (GPL-2.0-or-later) is counted but its
sentences are never copied into a checkpoint.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

EVIDENCE_FILE = "evidence.json.gz"
FORMAT = 1
MAX_EXAMPLES = 3
RARE_BELOW = 5  # seen fewer times than this in all training data: rare
EXAMPLE_CORPORA = ("multi30k",)  # whose sentences may be shown (and so shipped) as examples
MAX_FILE_BYTES = 16 << 20  # a larger index is refused, not read
# A word: letters, with inner hyphens or apostrophes ("E-Mail", "geht's"); digits and punctuation are no words.
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")


class EvidenceError(ValueError):
    """An evidence file that is unreadable or not in this format."""


def german_words(text: str) -> list[str]:
    """The words of a German text as the index keys them: lowercased, in order, repeats kept."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def build_index(corpora: dict[str, tuple[list[str], list[str]]]) -> dict:
    """The index of training corpora {name: (german sentences, english sentences)}: per word its count
    in each corpus and the indices of up to MAX_EXAMPLES short example pairs (from EXAMPLE_CORPORA)."""
    names = list(corpora)
    counts: dict[str, list[int]] = {}
    for column, name in enumerate(names):
        for word, n in Counter(w for sentence in corpora[name][0] for w in german_words(sentence)).items():
            counts.setdefault(word, [0] * len(names))[column] = n
    pairs, examples, chosen = [], {}, {}
    for name in (n for n in names if n in EXAMPLE_CORPORA):
        src, tgt = corpora[name]
        for i in sorted(range(len(src)), key=lambda i: (len(src[i]), i)):  # the shortest sentences first
            for word in dict.fromkeys(german_words(src[i])):
                found = examples.setdefault(word, [])
                if len(found) < MAX_EXAMPLES:
                    if i not in chosen:
                        chosen[i] = len(pairs)
                        pairs.append([src[i], tgt[i]])
                    found.append(chosen[i])
    words = {w: [c, examples.get(w, [])] for w, c in sorted(counts.items())}
    bigrams = sorted({b for name in names for sentence in corpora[name][0] for b in word_bigrams(german_words(sentence))})
    return {"format": FORMAT, "corpora": names, "pairs": pairs, "words": words, "bigrams": bigrams,
            "sizes": {name: len(corpora[name][0]) for name in names}}


def word_bigrams(words: list[str]) -> list[str]:
    """Neighbouring words, as "first second": how a sentence's words go together."""
    return [f"{a} {b}" for a, b in zip(words, words[1:])]


def write_index(folder: Path, index: dict) -> Path:
    path = Path(folder) / EVIDENCE_FILE
    path.write_bytes(gzip.compress(json.dumps(index, ensure_ascii=False, separators=(",", ":")).encode(), mtime=0))
    return path


@dataclass
class Evidence:
    """A loaded index; `for_sentence` answers what the page and /explain show."""

    corpora: list[str]
    sizes: dict[str, int]
    words: dict[str, list]
    pairs: list[list[str]]
    bigrams: frozenset = frozenset()  # every pair of neighbouring words seen in training

    def unseen_bigrams(self, text: str) -> tuple[list[str], int]:
        """The neighbouring-word pairs of a sentence never seen in training, and how many pairs it has."""
        pairs = word_bigrams(german_words(text))
        return [b for b in dict.fromkeys(pairs) if b not in self.bigrams], len(pairs)

    def word(self, word: str) -> dict:
        """One word's evidence: count in all training data, per corpus, examples, rare and unseen."""
        counts, example_ids = self.words.get(word, [[0] * len(self.corpora), []])
        total = sum(counts)
        return {"word": word, "count": total, "counts": dict(zip(self.corpora, counts)),
                "examples": [{"de": self.pairs[i][0], "en": self.pairs[i][1]} for i in example_ids],
                "rare": 0 < total < RARE_BELOW, "unseen": total == 0}

    def for_sentence(self, text: str) -> list[dict]:
        """Each distinct word of a German sentence, in order of first appearance."""
        return [self.word(w) for w in dict.fromkeys(german_words(text))]


def read_index(path: Path) -> Evidence:
    """The index in `path`, checked: its size, gzip and JSON, and the fields this module reads."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise EvidenceError(f"{path} is larger than {MAX_FILE_BYTES >> 20} MB: not an evidence index")
        with gzip.open(path, "rt", encoding="utf-8") as f:
            index = json.loads(f.read(8 * MAX_FILE_BYTES))
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as err:
        raise EvidenceError(f"cannot read {path}: {err}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise EvidenceError(f"{path} is not an evidence index of format {FORMAT}")
    corpora, words, pairs = index.get("corpora"), index.get("words"), index.get("pairs")
    if not (isinstance(corpora, list) and isinstance(words, dict) and isinstance(pairs, list)):
        raise EvidenceError(f"{path} lacks corpora, words or pairs")
    return Evidence(corpora, dict(index.get("sizes") or {}), words, pairs, frozenset(index.get("bigrams") or ()))


def load_evidence(folder: str | Path) -> Evidence | None:
    """The index of a checkpoint folder, or None when it has none (checkpoints older than the index)."""
    path = Path(folder) / EVIDENCE_FILE
    return read_index(path) if path.is_file() else None
