"""Everyday German: example sentences of the Ding dictionary (Debian's `trans-de-en`), fetched, never shipped.

The dictionary (Frank Richter, TU Chemnitz; GPL-2.0-or-later) is one entry a line,
`German side :: English side`; each side is a list of parts separated by ` | `, part i of one side
translating part i of the other. Most parts are headwords (`Bier {n}`), some are example sentences
("Hast du Lust auf ein Bier?" :: "Do you fancy a beer?"). This module keeps the sentences:

    python -m corpora.everyday_corpus --output runs/corpora/ding          # apt-get download, check, extract
    python -m corpora.everyday_corpus --dictionary /path/to/de-en --output ...

and writes `train`, `dev` and `test` (`.de` / `.en`, one sentence a line), `phrases` (multi-word
entries that are no sentences, "kleines Bier" -> "half a pint of beer", for `train.py --ding-phrases`), `words`
(headwords, "Bahnhof" -> "station", for `train.py --ding-words`)
and `SOURCE.json` (the package, its sha256, the license and the counts). dev and test are fixed by a hash of the German
sentence, so they never change with the order of the file and training never sees them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import data

from .apt_packages import sha256_of

PACKAGE = "trans-de-en"
VERSION = "1.9-6"
LICENSE = "GPL-2.0-or-later"
SOURCE_URL = "https://dict.tu-chemnitz.de/"
DICTIONARY_IN_PACKAGE = Path("usr/share/trans/de-en")
# sha256 of the dictionary file of trans-de-en 1.9-6 (Debian bookworm), so another file is not trained on unnoticed.
DICTIONARY_SHA256 = "34052c6021d09eadfee7a893a789204265954df70fe9c36d38fa00058d79d326"
DEV_SIZE, TEST_SIZE = 1000, 1000

# Markup removed from a sentence: {m} {f} {n} {pl} {v} (grammar), [ugs.] [Br.] [fig.] (usage labels).
_MARKUP = re.compile(r"\s*(\{[^{}]*\}|\[[^\[\]]*\])")
# What makes a part not one sentence: alternatives (a/b, "(…)"), placeholders (etw., jdn., sth., sb., …).
_ALTERNATIVES = re.compile(r"[()/;]|…|\.\.\.|\b(etw|jdn|jdm|jds|sth|sb|sb's|o\.s)\.")
# One reading of a part with choices in it: optional words "(…)" left out, the first of two words "a/b" kept.
_OPTIONAL = re.compile(r"\s*\([^()]*\)")
# An abbreviation of a headword, between slashes: "Bahnhof {m} /Bhf./", "station /Sta./".
_ABBREVIATION = re.compile(r"\s*/[^/\s]+/")
_WORD_CHOICE = re.compile(r"(?<![\w/])([^\W\d_][\w'-]*)/([^\W\d_][\w'-]*)(?![\w/])")
# A word choice whose second word starts a phrase ("Der Bauer/Das Sofa ächzte") has no known scope.
_PHRASE_STARTS = {"der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "the", "a", "an"}
_SENTENCE_END = re.compile(r"[.?!][\"'»«“”]?$")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "´": "'"})
MIN_WORDS, MAX_WORDS = 2, 40
# A headword is kept for training when its German word occurs this often on the German sides of the
# dictionary (its compounds' entries, examples, inflections aside): 44,000 of 232,000, the common ones.
MIN_HEADWORD_USES = 5


class DingError(RuntimeError):
    """The dictionary is missing, unreadable, or not the file whose checksum we know."""


@dataclass
class Extraction:
    """Sentence pairs in the order found, phrase pairs (multi-word entries that are no sentences), and why
    the other parts were left out."""

    pairs: list[tuple[str, str]] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    phrases: list[tuple[str, str]] = field(default_factory=list)
    recovered: list[tuple[str, str]] = field(default_factory=list)  # one reading of parts with choices: training only
    words: list[tuple[str, str]] = field(default_factory=list)  # headword senses: one German word, an English one

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


def clean(text: str) -> str:
    """One side of a part without markup, typographic apostrophes or doubled spaces."""
    text = _MARKUP.sub("", text).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip()


def sentence_problem(text: str) -> str | None:
    """Why a cleaned part is not a sentence we train on, or None when it is one."""
    if not text or not (text[0].isupper() or text[0] in "\"'„“»0123456789"):
        return "not a sentence"
    if not _SENTENCE_END.search(text):
        return "not a sentence"
    if _ALTERNATIVES.search(text):
        return "alternatives or placeholders"
    if not MIN_WORDS <= len(text.split()) <= MAX_WORDS:
        return "too short or too long"
    return None


def extract_pairs(lines) -> Extraction:
    """The example-sentence pairs of dictionary lines (comments skipped), deduplicated, in file order."""
    found, seen, readings = Extraction(), set(), set()  # readings: deduplicated apart, so no sentence is lost to one
    for line in lines:
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        sides = line.split(" :: ")
        if len(sides) != 2:
            found.drop("malformed line")
            continue
        de_parts, en_parts = sides[0].split(" | "), sides[1].split(" | ")
        if len(de_parts) != len(en_parts):
            found.drop("misaligned parts")
            continue
        for de, en in zip(de_parts, en_parts):
            if (reading := recovered_pair(de, en)) and reading not in readings:
                readings.add(reading)
                found.recovered.append(reading)
            for pair in part_pairs(de, en, found):
                if pair in seen:
                    found.drop("duplicate")
                else:
                    seen.add(pair)
                    found.pairs.append(pair)
            if (phrase := phrase_pair(de, en)) and phrase not in seen:
                seen.add(phrase)
                found.phrases.append(phrase)
            found.words.extend(word_pairs(de, en))
    return found


def first_alternatives(de: str, en: str) -> tuple[str, str]:
    """The first of the "; "-separated alternatives of each side of an aligned part."""
    return de.split("; ")[0], en.split("; ")[0]


def phrase_pair(de: str, en: str) -> tuple[str, str] | None:
    """A multi-word entry that is no sentence ("kleines Bier" :: "half a pint of beer"): the first
    alternative of each side, cleaned; None when either side is a sentence, one word or has placeholders."""
    de, en = (clean(first) for first in first_alternatives(de, en))
    if sentence_problem(de) is None or sentence_problem(en) is None:
        return None  # a sentence: kept (or not) by the sentence rules
    if len(de.split()) < 2 or len(en.split()) < 2 or _ALTERNATIVES.search(de) or _ALTERNATIVES.search(en):
        return None
    return de, en


def _starts_phrase(first: str, second: str) -> bool:
    """Whether the second word of a choice starts a longer phrase: an article, or a noun after a verb or
    adjective ("eingespart/Geld gespart", "Briefkontakt/brieflichem Kontakt")."""
    return second.lower() in _PHRASE_STARTS or first[0].isupper() != second[0].isupper()


def _headword(text: str) -> str:
    """A headword alternative without markup, its abbreviation ("Bahnhof {m} /Bhf./") or its sense ("(Bahn)")."""
    return clean(_OPTIONAL.sub("", _ABBREVIATION.sub("", clean(text))))


def word_pairs(de: str, en: str) -> list[tuple[str, str]]:
    """The headword senses of an aligned part ("Eisenbahnzug {m}; Zug {m} (Bahn)" :: "train"): every German
    alternative that is one word, with every English one of one to three words; none with placeholders.
    Which English word a German one keeps is chosen later, by `likeliest_senses`."""
    german = [
        w
        for w in map(_headword, clean(de).split("; "))
        if len(w.split()) == 1 and w[0].isalpha() and not _ALTERNATIVES.search(w)
    ]
    pairs = []
    for english in map(_headword, clean(en).split("; ")):  # clean first: "to run {ran; run}" is one
        if not 1 <= len(english.split()) <= 3 or _ALTERNATIVES.search(english) or sentence_problem(english) is None:
            continue
        for word in german:
            verb = english.startswith("to ") and word[0].islower()  # "to go" would teach a "to" before every verb
            pairs.append((word, english[3:] if verb else english))
    return pairs


def common_words(
    words: list[tuple[str, str]], lines: list[str], min_uses: int = MIN_HEADWORD_USES
) -> list[tuple[str, str]]:
    """The headwords whose German word occurs at least `min_uses` times on the German sides of `lines`."""
    uses = Counter(
        w
        for line in lines
        if " :: " in line and not line.startswith("#")
        for w in re.findall(r"\w+", clean(line.split(" :: ")[0]).lower())
    )
    return [(de, en) for de, en in words if uses[de.lower()] >= min_uses]


def likeliest_senses(words: list[tuple[str, str]], sentences: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One English sense for each German headword: the one whose words most often appear in the English of
    the example sentences whose German holds the headword ("Zug": "train" rather than "lineament" or
    "platoon"); the dictionary's first where the sentences cannot tell. In the order of first appearance."""
    tokens = [(set(re.findall(r"\w+", de.lower())), set(re.findall(r"\w+", en.lower()))) for de, en in sentences]
    holding: dict[str, list[set[str]]] = {}
    for german, english in tokens:
        for word in german:
            holding.setdefault(word, []).append(english)
    senses: dict[str, list[str]] = {}
    for de, en in words:
        if en not in senses.setdefault(de, []):
            senses[de].append(en)

    def found_with(de: str, en: str) -> int:
        needed = set(re.findall(r"\w+", en.lower()))
        return sum(needed <= english for english in holding.get(de.lower(), []))

    return [(de, max(options, key=lambda en: found_with(de, en))) for de, options in senses.items()]


def one_reading(text: str, choices: bool = True) -> str | None:
    """A part with choices in it as one plain sentence: optional words "(…)" left out, the first of "a/b"
    kept; None when a choice's scope is unknown (" / ", a second word that starts a phrase) or none was made."""
    plain = clean(_OPTIONAL.sub("", clean(text)))
    plain = re.sub(r"\s+([,.?!])", r"\1", plain)
    if any(not choices or _starts_phrase(*m.groups()) for m in _WORD_CHOICE.finditer(plain)):
        return None
    plain = _WORD_CHOICE.sub(r"\1", plain)
    return plain if plain != clean(text) else None


def recovered_pair(de: str, en: str) -> tuple[str, str] | None:
    """One reading of an aligned part that the sentence rules drop for its choices ("Er war ein Jahr im
    Gefängnis." :: "He spent a year in prison/jail."): the first alternative of each side, as one sentence
    pair; None when the part is kept as it is, or no reading of it is a sentence."""
    alternatives = de.split("; ") + en.split("; ")
    if all(sentence_problem(clean(text)) is None for text in alternatives):
        return None  # kept as it is, every alternative
    de, en = first_alternatives(de, en)
    readings = [one_reading(de, choices=False) or clean(de), one_reading(en) or clean(en)]
    if any(sentence_problem(text) for text in readings):
        return None
    return readings[0], readings[1]


def part_pairs(de: str, en: str, found: Extraction) -> list[tuple[str, str]]:
    """The sentence pairs of one aligned part. Alternatives separated by "; " are expanded (every German
    one with every English one: each is a whole translation of the others), when every one is a sentence."""
    de_alternatives, en_alternatives = ([clean(x) for x in side.split("; ")] for side in (de, en))
    for text in de_alternatives + en_alternatives:
        if problem := sentence_problem(text):
            found.drop(problem)
            return []
    return [(d, e) for d in de_alternatives for e in en_alternatives]


def _key(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def held_out_rank(german: str) -> str:
    """A fixed pseudo-random order of German sentences: the first ones are dev, then test."""
    return hashlib.sha256(_key(german).encode()).hexdigest()


def split_pairs(
    pairs: list[tuple[str, str]],
    exclude: set[str] = frozenset(),
    dev_size: int = DEV_SIZE,
    test_size: int = TEST_SIZE,
    recovered: list[tuple[str, str]] = (),
) -> tuple[dict[str, list[tuple[str, str]]], int]:
    """train/dev/test by German sentence (all translations of one sentence land in one split; dev and test
    keep the first translation only), without any pair whose German or English side is in `exclude`
    (normalised: the Multi30k dev and test sentences). The `recovered` pairs (one reading of parts with
    choices) join training only, so dev and test are made of the plain sentences alone and never move.
    Returns the splits and how many were excluded."""
    by_german: dict[str, list[tuple[str, str]]] = {}
    excluded = 0
    for de, en in pairs:
        if _key(de) in exclude or _key(en) in exclude:
            excluded += 1
            continue
        by_german.setdefault(_key(de), []).append((de, en))
    order = sorted(by_german, key=held_out_rank)
    dev_keys, test_keys = order[:dev_size], order[dev_size : dev_size + test_size]
    splits = {
        "dev": [by_german[k][0] for k in dev_keys],
        "test": [by_german[k][0] for k in test_keys],
        "train": [pair for k in order[dev_size + test_size :] for pair in by_german[k]],
    }
    held_out_english = {_key(en) for name in ("dev", "test") for _, en in splits[name]}
    held_out_german = set(dev_keys) | set(test_keys)
    known = set(splits["train"])
    for de, en in recovered:
        if (de, en) not in known and _key(de) not in held_out_german and not {_key(de), _key(en)} & exclude:
            known.add((de, en))
            splits["train"].append((de, en))
        else:
            excluded += (de, en) not in known
    kept = [pair for pair in splits["train"] if _key(pair[1]) not in held_out_english]
    excluded += len(splits["train"]) - len(kept)
    splits["train"] = sorted(kept, key=lambda pair: held_out_rank(pair[0] + "\t" + pair[1]))
    return splits, excluded


def _run(command: list[str], cwd: Path, what: str) -> None:
    if shutil.which(command[0]) is None:
        raise DingError(
            f"{command[0]} is not installed: {what} needs Debian's tools; download {PACKAGE} "
            f"elsewhere and pass its de-en file (or the .deb) with --dictionary"
        )
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise DingError(f"{' '.join(command)} failed ({last}); run 'apt-get update' first, or pass --dictionary")


def unpack_deb(deb: Path, folder: Path) -> Path:
    """The dictionary file inside a trans-de-en .deb, unpacked into `folder`."""
    _run(["dpkg-deb", "-x", str(deb), str(folder)], folder, f"unpacking {deb.name}")
    path = folder / DICTIONARY_IN_PACKAGE
    if not path.is_file():
        raise DingError(f"{deb} holds no {DICTIONARY_IN_PACKAGE}: is it the {PACKAGE} package?")
    return path


def obtain_dictionary(given: str | None, scratch: Path) -> Path:
    """The dictionary file: the one given (a de-en file or a .deb), else `apt-get download trans-de-en`."""
    if given:
        path = Path(given)
        if not path.is_file():
            raise DingError(f"--dictionary {path}: no such file")
        return unpack_deb(path, scratch) if path.suffix == ".deb" else path
    _run(["apt-get", "download", PACKAGE], scratch, f"downloading {PACKAGE}")
    debs = sorted(scratch.glob(f"{PACKAGE}_*.deb"))
    if not debs:
        raise DingError(f"apt-get download {PACKAGE} wrote no .deb")
    return unpack_deb(debs[-1], scratch)


def checked(path: Path, expected: str | None = DICTIONARY_SHA256) -> str:
    """The file's sha256, refused when it is not the expected one (None: any file, recorded)."""
    digest = sha256_of(path)
    if expected and digest != expected:
        raise DingError(
            f"{path} has sha256 {digest}, not {expected} ({PACKAGE} {VERSION}): another version "
            f"gives other splits; pass --any-version to use it anyway (its checksum is recorded)"
        )
    return digest


def read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise DingError(f"cannot read {path}: {err}") from None


def write_corpus(folder: Path, splits: dict[str, list[tuple[str, str]]], source: dict) -> None:
    """`{split}.de` / `{split}.en` and SOURCE.json, written into a fresh temporary folder, then moved in place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    for name, pairs in splits.items():
        for side, lang in ((0, "de"), (1, "en")):
            (tmp / f"{name}.{lang}").write_text("".join(pair[side] + "\n" for pair in pairs), encoding="utf-8")
    (tmp / "SOURCE.json").write_text(json.dumps(source, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)


def multi30k_held_out(data_dir: str | None) -> set[str]:
    """Normalised sentences of the Multi30k dev and test sets (both sides), which no Ding split may hold."""
    folder = data.find_corpus(data_dir)
    held = set()
    for split in ("val", "test_2016_flickr"):
        corpus = data.load_split(folder, split)
        held.update(_key(s) for s in corpus.src + corpus.tgt)
    return held


def build(
    output: Path,
    dictionary: str | None = None,
    data_dir: str | None = None,
    any_version: bool = False,
    dev_size: int = DEV_SIZE,
    test_size: int = TEST_SIZE,
) -> dict:
    """Obtain, check, extract, split and write the corpus; returns what SOURCE.json records."""
    with tempfile.TemporaryDirectory() as scratch:
        path = obtain_dictionary(dictionary, Path(scratch))
        digest = checked(path, None if any_version else DICTIONARY_SHA256)
        lines = read_lines(path)
        found = extract_pairs(lines)
        headwords = len({de for de, _ in found.words})
        found.words = common_words(found.words, lines)
    if not found.pairs:
        raise DingError(f"{path} holds no example sentences: is it the Ding de-en dictionary?")
    held_out = multi30k_held_out(data_dir)
    splits, excluded = split_pairs(found.pairs, held_out, dev_size, test_size, found.recovered)
    splits["phrases"] = [p for p in found.phrases if _key(p[0]) not in held_out and _key(p[1]) not in held_out]
    splits["words"] = likeliest_senses(found.words, splits["train"])  # told by training sentences only
    if not splits["train"] or len(splits["test"]) < test_size:
        raise DingError(
            f"{path} holds {len(found.pairs)} example sentences: too few for a dev set of {dev_size}, "
            f"a test set of {test_size} and training data"
        )
    source = {
        "corpus": "Ding (example sentences)",
        "package": f"{PACKAGE} {VERSION}",
        "url": SOURCE_URL,
        "license": LICENSE,
        "dictionary_sha256": digest,
        "pairs_found": len(found.pairs),
        "pairs_recovered": len(found.recovered),
        "phrases_found": len(found.phrases),
        "words_found": headwords,
        "dropped_parts": dict(sorted(found.dropped.items())),
        "excluded_overlap": excluded,
        "splits": {name: len(pairs) for name, pairs in splits.items()},
    }
    write_corpus(output, splits, source)
    return source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(data.DEFAULT_DING_DIR), help="folder to write the splits into")
    parser.add_argument(
        "--dictionary", help="a de-en dictionary file or a trans-de-en .deb (default: apt-get download)"
    )
    parser.add_argument(
        "--data-dir", help="Multi30k folder, whose dev and test sentences are kept out (default: $MULTI30K_DIR)"
    )
    parser.add_argument("--any-version", action="store_true", help="accept a dictionary with another checksum")
    args = parser.parse_args(argv)
    try:
        source = build(Path(args.output), args.dictionary, args.data_dir, args.any_version)
    except (DingError, data.CorpusError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(json.dumps(source, indent=2, ensure_ascii=False))
    print(f"wrote {args.output} ({LICENSE}: keep it out of the repository)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
