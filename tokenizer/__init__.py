"""One byte-level BPE vocabulary shared by German and English, built with `tokenizers`.

Byte-level: every string, whatever its characters, becomes tokens, and decoding gives the
(NFC-normalised) text back exactly, so nothing a user types is lost or crashes the model.
Case, umlauts and ß are kept as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    trainers,
)

# The order fixes the ids, and the model config uses the same ones.
SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<unk>"]
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)


def train_tokenizer(
    texts: Iterable[str], vocab_size: int = 8000, min_frequency: int = 2, whole_han: bool = False
) -> Tokenizer:
    """Learn BPE merges from `texts` (both languages together) up to `vocab_size` tokens. With `whole_han`
    (Chinese), each Han character is a word of its own and every one in `texts` one piece (han_pieces.py);
    the merges that make them come after the `vocab_size` learned ones."""
    from .han_pieces import HAN, han_pre_tokenizer, whole_characters

    texts = list(texts)
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.normalizer = normalizers.NFC()  # one code point for 'ä', however it was typed
    tokenizer.pre_tokenizer = han_pre_tokenizer() if whole_han else pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # all 256 bytes: no input is unknown
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    if whole_han:
        tokenizer = whole_characters(tokenizer, {c for text in texts for c in HAN.findall(text)})
    check_special_tokens(tokenizer)
    return text_only(tokenizer)


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Read a tokenizer.json written by `train_tokenizer` (or a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "tokenizer.json"
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as err:  # the Rust library raises plain Exceptions
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist") from None
        raise ValueError(f"{path} is not a readable tokenizer.json: {err}") from None
    check_special_tokens(tokenizer, path)
    return text_only(tokenizer)


def text_only(tokenizer: Tokenizer) -> Tokenizer:
    """Encode a typed "<pad>" or "</s>" as the characters it is, never as a control token: only
    code adds <s>, </s> and <pad> (by id). Not saved in tokenizer.json, so set on every load."""
    tokenizer.encode_special_tokens = True
    return tokenizer


def check_special_tokens(tokenizer: Tokenizer, source: object = "tokenizer") -> None:
    """The model relies on <pad>=0, <s>=1, </s>=2; a tokenizer with other ids would scramble it."""
    for expected_id, token in enumerate(SPECIAL_TOKENS):
        actual = tokenizer.token_to_id(token)
        if actual != expected_id:
            raise ValueError(f"{source}: special token {token} has id {actual}, expected {expected_id}")


def check_vocabulary(
    tokenizer: Tokenizer, vocab_size: int, special_ids: dict[str, int], source: object = "tokenizer"
) -> None:
    """Refuse (ValueError) a tokenizer whose size is not `vocab_size` or whose special tokens have
    other ids than `special_ids` (token -> id), as a model's config gives them."""
    size = tokenizer.get_vocab_size()
    if size != vocab_size:
        raise ValueError(f"{source} has {size:,} tokens where the model's config says vocab_size={vocab_size:,}")
    for token, expected_id in special_ids.items():
        actual = tokenizer.token_to_id(token)
        if actual != expected_id:
            raise ValueError(
                f"{source}: special token {token} has id {actual} where the model's config says {expected_id}"
            )


def fingerprint(tokenizer: Tokenizer) -> str:
    """A short hash of what the tokenizer maps: its vocabulary (token -> id) and its BPE merges.
    Two tokenizers with the same size and special ids but other tokens differ here."""
    model = json.loads(tokenizer.to_str()).get("model", {})
    canonical = json.dumps(
        {"vocab": sorted(tokenizer.get_vocab().items(), key=lambda item: item[1]), "merges": model.get("merges", [])},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def token_strings(tokenizer: Tokenizer, ids: Iterable[int]) -> list[str]:
    """Readable label of each token: byte-level marks decoded, a leading space shown as '▁'."""
    labels = []
    for i in ids:
        text = tokenizer.decode([i], skip_special_tokens=False)
        labels.append("▁" + text[1:] if text.startswith(" ") else text)
    return labels
