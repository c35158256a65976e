"""Which kind of German is this: a photo caption, like the 29,000 the default model learned from, or everyday speech?

A naive Bayes guess from the German of the two kinds of training sentences (Multi30k's captions, the Ding
dictionary's example sentences): each token of a text (words and punctuation, and which token comes first and
last) is counted in both, and the text's log-odds are the sum of its tokens' log-ratios of the two smoothed
frequencies. Above `threshold` the text reads like everyday German. Questions ("?", "Wo", first words like
"Ich" or "Kannst") are rare in captions and common in the dictionary; "Ein Mann ..." is the reverse.

The page uses it to show the everyday model's translation beside the default model's; recipes/everyday/route.py
measures it as a router between the two. `python -m training.domain` writes the file from the corpora.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from model.checkpoint.json_file import write_json_gz

from .checked_json import (
    MAX_COUNT,
    checked_object,
    checked_two_way_counts,
    is_whole,
    optional,
    read_json,
    refused,
)

DOMAIN_FILE = "domain.json.gz"
FORMAT = 1
KINDS = ("captions", "everyday")
MAX_FILE_BYTES = 16 << 20  # decompressed; the shipped file is about 1 MB
MAX_DEPTH = 3  # the file -> counts -> one token's two counts
_TOKEN = re.compile(r"\w+|[^\w\s]")  # ui/static/domain.js writes it for JS
OFF = "the page does not guess which kind of German a text is"


def features(text: str) -> list[str]:
    """The tokens of `text` (words and punctuation marks, as written) and two markers: its first and last token."""
    tokens = _TOKEN.findall(text)
    return tokens + [f"<first>{tokens[0]}", f"<last>{tokens[-1]}"] if tokens else []


def build_counts(captions: list[str], everyday: list[str], smoothing: float = 0.5) -> dict:
    """The file's content: every feature's count in the caption and the everyday sentences."""
    counts: dict[str, list[int]] = {}
    for column, sentences in enumerate((captions, everyday)):
        for sentence in sentences:
            for feature in features(sentence):
                counts.setdefault(feature, [0, 0])[column] += 1
    return {
        "format": FORMAT,
        "kinds": list(KINDS),
        "sentences": [len(captions), len(everyday)],
        "smoothing": smoothing,
        "threshold": 0.0,
        "counts": counts,
    }


def write_counts(folder: str | Path, content: dict) -> Path:
    return write_json_gz(Path(folder) / DOMAIN_FILE, content)


@dataclass(frozen=True)
class DomainGuess:
    """A loaded table: `log_odds` of everyday against captions for a text, and what pulled it."""

    ratios: dict[str, float]  # per feature: log P(feature | everyday) - log P(feature | captions)
    unseen: float  # the same for a feature in neither corpus
    threshold: float = 0.0
    sentences: tuple[int, int] = field(default=(0, 0))

    def log_odds(self, text: str) -> float:
        return sum(self.ratios.get(f, self.unseen) for f in features(text))

    def everyday(self, text: str) -> bool:
        return self.log_odds(text) > self.threshold

    def report(self, text: str, shown: int = 4) -> dict:
        """`everyday`, `log_odds` and the words (and "?" or "!") that pulled most towards the guess."""
        odds = self.log_odds(text)
        everyday = odds > self.threshold
        sign = 1 if everyday else -1
        words = {t: self.ratios.get(t, self.unseen) for t in _TOKEN.findall(text) if t in "?!" or t[0].isalnum()}
        pulled = sorted((t for t in words if sign * words[t] > 0), key=lambda t: -sign * words[t])[:shown]
        return {"everyday": everyday, "log_odds": round(odds, 2), "words": pulled}


def guess_from(content: dict) -> DomainGuess:
    """The table of checked content (read_domain's or build_counts')."""
    a = content["smoothing"]
    n_captions, n_everyday = (sum(c[k] for c in content["counts"].values()) for k in (0, 1))
    size = len(content["counts"]) + 1  # every feature, and one for those never seen
    log_captions, log_everyday = math.log(n_captions + a * size), math.log(n_everyday + a * size)
    ratios = {
        f: math.log(e + a) - log_everyday - math.log(c + a) + log_captions for f, (c, e) in content["counts"].items()
    }
    return DomainGuess(ratios, log_captions - log_everyday, content["threshold"], tuple(content["sentences"]))


def read_domain(path: str | Path) -> DomainGuess:
    """The table in `path`, checked entry by entry; anything wrong is a CheckpointFileError naming the file."""
    return guess_from(read_content(path))


def read_content(path: str | Path) -> dict:
    """The file's content, checked entry by entry (read_domain's guess and training_data/truecase.py's counts read it)."""
    content = checked_object(
        read_json(path, MAX_FILE_BYTES, MAX_DEPTH, gzipped=True),
        path,
        "the file",
        ("format", "kinds", "sentences", "smoothing", "threshold", "counts"),
    )
    if content["format"] != FORMAT:
        raise refused(path, "format", content["format"], f"{FORMAT}")
    if content["kinds"] != list(KINDS):
        raise refused(path, "kinds", content["kinds"], f"{list(KINDS)}")
    sentences = content["sentences"]
    if not (isinstance(sentences, list) and len(sentences) == 2 and all(is_whole(n, 1, MAX_COUNT) for n in sentences)):
        raise refused(path, "sentences", sentences, "two whole numbers of sentences, each at least 1")
    return checked_two_way_counts(content, path)


def checked_domain(model_id: str | Path, revision: str | None = None) -> tuple[Path, dict] | None:
    """A checkpoint's domain file and its checked content, read once (the guess and training_data/truecase.py's counts both
    come from it), or None where it has none or the file is refused (one warning)."""
    from model.checkpoint.hub import resolve_file

    try:
        path = Path(resolve_file(model_id, DOMAIN_FILE, revision=revision))
    except Exception:  # noqa: BLE001 - absent in this checkpoint, or the Hub unreachable: go without
        return None
    content = optional(lambda: read_content(path), OFF)
    return None if content is None else (path, content)


def load_domain(model_id: str | Path, revision: str | None = None) -> DomainGuess | None:
    """The table of a checkpoint folder or Hub repo, or None where it has none; a refused file is one warning
    that names it, and the page goes without the guess."""
    found = checked_domain(model_id, revision)
    return found and guess_from(found[1])


def domain_file(model_id: str | Path, revision: str | None = None) -> Path | None:
    """The checked domain file of a checkpoint (the page's own guess reads a copy: ui/static/domain.js), or None."""
    found = checked_domain(model_id, revision)
    return found and found[0]
