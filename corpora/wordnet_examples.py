"""English-only everyday text for back-translation: the example phrases of WordNet's glosses.

    python -m corpora.wordnet_examples [--output runs/corpora] [--debs FOLDER] [--any-version]

Debian's `wordnet-base` (WordNet 3.0, Princeton University, the WordNet 3.0 license: use, copy, modify and
distribute with its notice) holds, in the glosses of `data.noun`, `data.verb`, `data.adj` and `data.adv`,
about 48,000 quoted examples ("he was elected to a seat in the Senate"). The package is fetched like the
Ding corpus (corpora/apt_packages.py: `apt-get download`, sha256 checked, `dpkg-deb -x`, nothing
installed or committed) and `runs/corpora/wordnet/train.en` is written, one example a line, with
SOURCE.json (package, version, sha256, license, counts).

Rules: every double-quoted part of a gloss is an example; whitespace is made single, and examples with
fewer than 2 or more than 40 words, an ellipsis, or no letter are dropped. An example that begins with a
subject pronoun and has at least 4 words is a sentence: its first letter is capitalised and a full stop
added where it ends without punctuation ("he was elected to a seat in the Senate" becomes "He was elected
to a seat in the Senate."; "polar diameter" stays a phrase). Duplicates, and every example that is a Multi30k val / test or Ding dev / test
sentence (normalised as corpora/everyday_corpus.py does), are dropped.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import data
from model.checkpoint.files import write_text

from . import everyday_corpus
from .apt_packages import Package, PackageError, unpacked
from .parallel_text import held_out  # every dev and test sentence, normalised

PACKAGE = Package(
    "wordnet-base",
    "1:3.0-37",
    "61060d960f9ada8fa120872312eccd3ecebfbab8c4579e4f5a74e1cf67620752",
    "WordNet-3.0 (Princeton University; permissive, with its copyright notice)",
)
DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
SUBJECTS = {"i", "you", "he", "she", "it", "we", "they", "this", "that", "there", "these", "those"}
MIN_WORDS, MAX_WORDS, SENTENCE_WORDS = 2, 40, 4


@dataclass
class Examples:
    kept: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    sentences: int = 0  # of the kept, those made sentences

    def drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1


def gloss_examples(line: str) -> list[str]:
    """The quoted examples of one line of a WordNet data file ('' for the licence lines that start with spaces)."""
    if line.startswith("  ") or " | " not in line:
        return []
    return re.findall(r'"([^"]*)"', line.split(" | ", 1)[1])


def cleaned(example: str, into: Examples) -> str | None:
    """The example as a training line, or None (counted in into.dropped) where a rule drops it."""
    text = " ".join(example.split())
    words = text.split()
    if "..." in text or "\u2026" in text:
        into.drop("ellipsis")
        return None
    if not re.search(r"[A-Za-z]", text):
        into.drop("no letter")
        return None
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        into.drop("length")
        return None
    if len(words) >= SENTENCE_WORDS and words[0].lower() in SUBJECTS:
        into.sentences += 1
        text = text[0].upper() + text[1:]
        if text[-1] not in ".?!":
            text += "."
    return text


def extract(root: Path, held: set[str]) -> Examples:
    """Every example of the data files under `root` (an unpacked wordnet-base), cleaned, once each, none held out."""
    found, seen = Examples(), set()
    folder = next((p for p in (root / "usr" / "share" / "wordnet", root) if (p / DATA_FILES[0]).is_file()), None)
    if folder is None:
        raise PackageError(f"no WordNet data files ({', '.join(DATA_FILES)}) under {root}")
    for name in DATA_FILES:
        path = folder / name
        if not path.is_file():
            continue
        for line in path.read_text(encoding="latin-1").splitlines():
            for example in gloss_examples(line):
                text = cleaned(example, found)
                if text is None:
                    continue
                if everyday_corpus._key(text) in held:
                    found.drop("held out")
                elif text in seen:
                    found.drop("duplicate")
                else:
                    seen.add(text)
                    found.kept.append(text)
    return found


def build(
    output: Path,
    debs: Path | None = None,
    data_dir: str | None = None,
    ding_dir: str | None = None,
    any_version: bool = False,
) -> dict:
    """Fetch, check, extract and write runs/corpora/wordnet; returns what SOURCE.json records."""
    held = held_out(data_dir, ding_dir)
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output) as scratch:
        root, record = unpacked(PACKAGE, Path(scratch), debs, any_version)
        found = extract(root, held)
    if not found.kept:
        raise PackageError("wordnet-base: no examples found")
    source = {
        "corpus": "wordnet",
        "language": "en",
        "packages": [record],
        "examples": len(found.kept),
        "sentences": found.sentences,
        "dropped": dict(sorted(found.dropped.items())),
    }
    folder = output / "wordnet"
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "train.en", "".join(text + "\n" for text in found.kept))
    write_text(folder / "SOURCE.json", json.dumps(source, indent=2, ensure_ascii=False) + "\n")
    return source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(data.DEFAULT_DING_DIR.parent), help="folder of the corpora")
    parser.add_argument("--debs", default=None, help="a folder of .debs already downloaded")
    parser.add_argument("--data-dir", default=None, help="Multi30k (for the held-out sentences)")
    parser.add_argument("--ding-dir", default=None, help="the Ding corpus (for the held-out sentences)")
    parser.add_argument(
        "--any-version", action="store_true", help="accept another wordnet-base (its sha256 is recorded)"
    )
    args = parser.parse_args(argv)
    try:
        source = build(
            Path(args.output), Path(args.debs) if args.debs else None, args.data_dir, args.ding_dir, args.any_version
        )
    except (PackageError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"wordnet: {source['examples']} examples ({source['sentences']} made sentences), dropped {source['dropped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
