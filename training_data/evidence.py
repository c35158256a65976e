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

from tokenizer.chinese import HAN

from .checked_json import (
    CheckpointFileError,
    checked_object,
    is_whole,
    kind,
    read_json,
    refused,
    shown,
)

EVIDENCE_FILE = "evidence.json.gz"
FORMAT = 1
MAX_EXAMPLES = 3
RARE_BELOW = 5  # seen fewer times than this in all training data: rare
EXAMPLE_CORPORA = ("multi30k",)  # whose sentences may be shown (and so shipped) as examples
MAX_FILE_BYTES = 16 << 20  # a larger index is refused, not read
# What the index may hold, by the model's vocabulary (the shipped Multi30k + Ding index: 830 bytes, 5.5 words and
# 19 word pairs per token): so many decompressed bytes, words and word pairs per vocabulary entry, and at least
# the MIN_ figures (a model of a small vocabulary still reads an index of these corpora).
BYTES_PER_TOKEN, WORDS_PER_TOKEN, PAIRS_PER_TOKEN = 4096, 32, 128
MIN_BYTES, MIN_WORDS, MIN_PAIRS = 16 << 20, 100_000, 400_000
CAPS = {
    "bytes": (BYTES_PER_TOKEN, MIN_BYTES),
    "words": (WORDS_PER_TOKEN, MIN_WORDS),
    "word pairs": (PAIRS_PER_TOKEN, MIN_PAIRS),
}
DEFAULT_VOCABULARY = 8000  # the shipped models'; for an index with no config.json beside it
MAX_DEPTH = 4  # the index -> words -> an entry -> its counts
MAX_CORPORA, MAX_NAME_CHARS, MAX_WORD_CHARS, MAX_SENTENCE_CHARS = 16, 64, 100, 2000
MAX_COUNT = 10**12
FIELDS = ("format", "corpora", "pairs", "words", "bigrams", "sizes")
# A word: letters, with inner hyphens or apostrophes ("E-Mail", "geht's"); digits and punctuation are no words.
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")


class EvidenceError(CheckpointFileError):
    """An evidence file that is unreadable or not in this format."""


def german_words(text: str) -> list[str]:
    """The words of a source text as the index keys them: lowercased, in order, repeats kept; Chinese, written
    without spaces, counts each Han character as a word ("我想要" -> 我, 想, 要)."""
    words: list[str] = []
    for w in _WORD.findall(text):
        if HAN.search(w):
            words.extend(part for part in re.split(f"({HAN.pattern})", w) if part)
        else:
            words.append(w.lower().replace("’", "'"))
    return words


def build_index(corpora: dict[str, tuple[list[str], list[str]]]) -> dict:
    """The index of training corpora {name: (german sentences, english sentences)}: per word its count
    in each corpus and the indices of up to MAX_EXAMPLES short example pairs (from EXAMPLE_CORPORA)."""
    names = list(corpora)
    counts: dict[str, list[int]] = {}
    for column, name in enumerate(names):
        for word, n in Counter(w for sentence in corpora[name][0] for w in german_words(sentence)).items():
            counts.setdefault(word, [0] * len(names))[column] = n
    pairs: list[list[str]] = []  # (german, english) example pairs
    examples: dict[str, list[int]] = {}  # word -> indices into pairs
    chosen: dict[int, int] = {}  # sentence index -> its index in pairs
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
    bigrams = sorted(
        {b for name in names for sentence in corpora[name][0] for b in word_bigrams(german_words(sentence))}
    )
    return {
        "format": FORMAT,
        "corpora": names,
        "pairs": pairs,
        "words": words,
        "bigrams": bigrams,
        "sizes": {name: len(corpora[name][0]) for name in names},
    }


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
        return {
            "word": word,
            "count": total,
            "counts": dict(zip(self.corpora, counts)),
            "examples": [{"de": self.pairs[i][0], "en": self.pairs[i][1]} for i in example_ids],
            "rare": 0 < total < RARE_BELOW,
            "unseen": total == 0,
        }

    def for_sentence(self, text: str) -> list[dict]:
        """Each distinct word of a German sentence, in order of first appearance."""
        return [self.word(w) for w in dict.fromkeys(german_words(text))]


def read_index(path: Path, vocab_size: int | None = None) -> Evidence:
    """The index in `path`, checked entry by entry; `vocab_size`: the model's (else config.json's beside it),
    which bounds how large the index may be. Anything wrong is an EvidenceError naming the file."""
    vocab_size = vocab_size or vocabulary_beside(path)
    try:
        if Path(path).stat().st_size > MAX_FILE_BYTES:
            raise EvidenceError(f"{path} is larger than {MAX_FILE_BYTES >> 20} MB: not an evidence index")
        return checked_index(read_json(path, cap("bytes", vocab_size), MAX_DEPTH, gzipped=True), path, vocab_size)
    except OSError as err:
        raise EvidenceError(f"cannot read {path}: {err}") from None
    except EvidenceError:
        raise
    except CheckpointFileError as err:  # the shared checks' errors, as this module's
        raise EvidenceError(str(err)) from None


def cap(what: str, vocab_size: int) -> int:
    """The most "bytes" (decompressed), "words" or "word pairs" an index for `vocab_size` tokens may hold."""
    per_token, at_least = CAPS[what]
    return max(at_least, per_token * vocab_size)


def vocabulary_beside(path: Path) -> int:
    """The vocabulary size in config.json beside `path`, else that of the shipped models."""
    from model.config import TransformerConfig

    config = Path(path).parent / "config.json"
    try:
        return TransformerConfig.from_json_file(config).vocab_size if config.is_file() else DEFAULT_VOCABULARY
    except (ValueError, OSError, RecursionError):
        return DEFAULT_VOCABULARY


def checked_index(index, path: Path, vocab_size: int) -> Evidence:
    """The parsed index as Evidence, once every field and entry is what build_index writes."""
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        found = f"format {shown(index.get('format'))}" if isinstance(index, dict) else kind(index)
        raise EvidenceError(f"{path} is not an evidence index of format {FORMAT} ({found})")
    checked_object(index, path, "the index", ("corpora", "pairs", "words"), FIELDS)
    corpora = checked_corpora(index["corpora"], path)
    pairs = checked_pairs(index["pairs"], path)
    words = checked_words(index["words"], path, corpora, len(pairs), vocab_size)
    bigrams = checked_bigrams(index.get("bigrams", []), path, vocab_size)
    return Evidence(corpora, checked_sizes(index.get("sizes", {}), path, corpora), words, pairs, bigrams)


def checked_corpora(corpora, path: Path) -> list[str]:
    if not isinstance(corpora, list) or not 1 <= len(corpora) <= MAX_CORPORA:
        raise refused(path, "corpora", corpora, f"a list of 1 to {MAX_CORPORA} corpus names")
    for i, name in enumerate(corpora):
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS or name in corpora[:i]:
            raise refused(path, f"corpora[{i}]", name, f"a new corpus name of 1 to {MAX_NAME_CHARS} characters")
    return corpora


def checked_sizes(sizes, path: Path, corpora: list[str]) -> dict[str, int]:
    """{corpus: sentences}, one entry per corpus (an older index without sizes has {})."""
    checked_object(sizes, path, "sizes", corpora if sizes else (), corpora)
    for name, n in sizes.items():
        if not is_whole(n, 0, MAX_COUNT):
            raise refused(path, f"sizes[{name!r}]", n, f"a whole number of sentences from 0 to {MAX_COUNT:,}")
    return sizes


def checked_pairs(pairs, path: Path) -> list[list[str]]:
    if not isinstance(pairs, list):
        raise EvidenceError(f"{path}: pairs is {kind(pairs)}, not a list of [German, English] pairs")
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, str) for t in pair)):
            raise refused(path, f"pairs[{i}]", pair, "a pair [German, English] of two texts")
        if max(len(pair[0]), len(pair[1])) > MAX_SENTENCE_CHARS:
            raise EvidenceError(f"{path}: pairs[{i}] holds a sentence of more than {MAX_SENTENCE_CHARS:,} characters")
    return pairs


def checked_words(words, path: Path, corpora: list[str], n_pairs: int, vocab_size: int) -> dict[str, list]:
    """{word: [count per corpus, example ids]}: whole counts of at least 0, at most MAX_EXAMPLES ids into pairs."""
    if not isinstance(words, dict):
        raise EvidenceError(f"{path}: words is {kind(words)}, not an object of {{word: [counts, examples]}}")
    if len(words) > cap("words", vocab_size):
        raise EvidenceError(
            f"{path} holds {len(words):,} words; an index for a vocabulary of {vocab_size:,} tokens "
            f"holds at most {cap('words', vocab_size):,}"
        )
    for word, entry in words.items():
        if not 0 < len(word) <= MAX_WORD_CHARS:
            raise refused(path, "a word", word, f"a word of 1 to {MAX_WORD_CHARS} characters")
        if not (
            isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list) and isinstance(entry[1], list)
        ):
            raise refused(path, f"words[{word!r}]", entry, "[counts per corpus, example ids]")
        counts, ids = entry
        if len(counts) != len(corpora):
            raise EvidenceError(f"{path}: words[{word!r}] has {len(counts)} counts for {len(corpora)} corpora")
        for corpus, n in zip(corpora, counts):
            if not is_whole(n, 0, MAX_COUNT):
                raise refused(path, f"words[{word!r}].count[{corpus!r}]", n, f"a whole number from 0 to {MAX_COUNT:,}")
        if len(ids) > MAX_EXAMPLES:
            raise EvidenceError(f"{path}: words[{word!r}] has {len(ids)} examples; an entry has at most {MAX_EXAMPLES}")
        for i in ids:
            if not is_whole(i, 0, n_pairs - 1):
                raise refused(
                    path,
                    f"words[{word!r}].examples",
                    i,
                    f"an example id from 0 to {n_pairs - 1} (the index holds {n_pairs} pairs)",
                )
    return words


def checked_bigrams(bigrams, path: Path, vocab_size: int) -> frozenset:
    """Neighbouring-word pairs "first second", at most cap("word pairs") of them."""
    if not isinstance(bigrams, list):
        raise EvidenceError(f"{path}: bigrams is {kind(bigrams)}, not a list of word pairs")
    if len(bigrams) > cap("word pairs", vocab_size):
        raise EvidenceError(
            f"{path} holds {len(bigrams):,} word pairs; an index for a vocabulary of "
            f"{vocab_size:,} tokens holds at most {cap('word pairs', vocab_size):,}"
        )
    for i, pair in enumerate(bigrams):
        if not isinstance(pair, str) or pair.count(" ") != 1 or len(pair) > 2 * MAX_WORD_CHARS + 1:
            raise refused(path, f"bigrams[{i}]", pair, "two words with a space between")
    return frozenset(bigrams)


def load_evidence(folder: str | Path) -> Evidence | None:
    """The index of a checkpoint folder, or None when it has none (checkpoints older than the index)."""
    path = Path(folder) / EVIDENCE_FILE
    return read_index(path) if path.is_file() else None
