"""The BPE tokenizer and the corpus reader / batcher, on the real Multi30k files."""

import gzip
import unicodedata
from pathlib import Path

import pytest

import data
from tests.corpus import DATA_DIR, needs_corpus
from tokenizer import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    load_tokenizer,
    token_strings,
    train_tokenizer,
)


@pytest.fixture(scope="module")
def corpus_tokenizer():
    train = data.load_split(DATA_DIR, "train")
    return train_tokenizer(train.src + train.tgt, vocab_size=8000)


@needs_corpus
def test_decode_encode_round_trip_on_validation(corpus_tokenizer):
    val = data.load_split(DATA_DIR, "val")
    sentences = val.src + val.tgt
    same = sum(
        corpus_tokenizer.decode(corpus_tokenizer.encode(s).ids) == unicodedata.normalize("NFC", s) for s in sentences
    )
    print(f"round trip: {same}/{len(sentences)}")
    assert same / len(sentences) >= 0.999
    assert corpus_tokenizer.get_vocab_size() == 8000


@needs_corpus
def test_special_tokens_case_umlauts_and_unseen_characters(corpus_tokenizer, tmp_path):
    tok = corpus_tokenizer
    assert [tok.token_to_id(t) for t in ("<pad>", "<s>", "</s>", "<unk>")] == [PAD_ID, BOS_ID, EOS_ID, 3]
    text = "Ein Mädchen läuft über die Straße. ÄÖÜ"
    assert tok.decode(tok.encode(text).ids) == text  # case, umlauts, ß kept; no stray spaces
    for odd in ("😀 Привет 漢字", "\x00\x07\u200b", "a" * 5000):
        assert tok.decode(tok.encode(odd).ids) == odd  # byte-level: nothing is unknown
    labels = token_strings(tok, tok.encode("Ein Mann fährt").ids)
    assert "".join(labels).replace("▁", " ") == "Ein Mann fährt"
    assert not any("Ġ" in label or "Ã" in label for label in labels)
    tok.save(str(tmp_path / "tokenizer.json"))
    assert load_tokenizer(tmp_path).encode(text).ids == tok.encode(text).ids


def test_load_tokenizer_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_tokenizer(tmp_path / "nope.json")
    (tmp_path / "tokenizer.json").write_text("{broken")
    with pytest.raises(ValueError, match="not a readable tokenizer.json"):
        load_tokenizer(tmp_path)


@needs_corpus
def test_multi30k_splits_have_the_published_sizes():
    sizes = {split: len(data.load_split(DATA_DIR, split)) for split in data.SPLITS}
    assert sizes == {"train": 29000, "val": 1014, "test_2016_flickr": 1000}


def write(path: Path, lines: list[str], compress: bool = False) -> None:
    text = "\n".join(lines) + "\n"
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")


def test_plain_files_empty_lines_and_misalignment(tmp_path, capsys):
    write(tmp_path / "train.de", ["Ein Hund.", "", "Eine Katze."])
    write(tmp_path / "train.en.gz", ["A dog.", "Nothing.", "A cat."], compress=True)
    corpus = data.load_split(tmp_path, "train")
    assert corpus.src == ["Ein Hund.", "Eine Katze."] and corpus.tgt == ["A dog.", "A cat."]
    assert corpus.skipped == 1
    assert "skipped 1 pair" in capsys.readouterr().err

    write(tmp_path / "val.de", ["Eins.", "Zwei."])
    write(tmp_path / "val.en", ["One."])
    with pytest.raises(data.CorpusError, match="2 lines but .* has 1"):
        data.load_split(tmp_path, "val")
    with pytest.raises(data.CorpusError, match="no test_2016_flickr.de"):
        data.load_split(tmp_path, "test_2016_flickr")
    (tmp_path / "bad.de.gz").write_bytes(b"not gzip")
    write(tmp_path / "bad.en", ["x"])
    with pytest.raises(data.CorpusError, match="cannot read"):
        data.load_split(tmp_path, "bad")


def test_missing_folder_and_no_network_say_what_to_do(tmp_path, monkeypatch):
    with pytest.raises(data.CorpusError, match="does not exist"):
        data.resolve_data_dir(tmp_path / "missing")
    # A download address that cannot answer stands in for a machine without network.
    monkeypatch.setattr(data, "DOWNLOAD_URL", "http://127.0.0.1:9/{name}")
    with pytest.raises(data.CorpusError, match="--data-dir"):
        data.download(tmp_path / "cache")
    assert not any((tmp_path / "cache").glob("*.part"))


def test_download_verifies_checksums_over_http(tmp_path, monkeypatch):
    """A local HTTP server plays the dataset's host: good files are kept, a wrong one is refused."""
    import http.server
    import threading

    served = tmp_path / "served"
    served.mkdir()
    for name in data.SHA256:
        (served / name).write_bytes((DATA_DIR / name).read_bytes() if DATA_DIR.is_dir() else b"x")

    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(served), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setattr(data, "DOWNLOAD_URL", f"http://127.0.0.1:{server.server_port}/{{name}}")
        if DATA_DIR.is_dir():
            data.download(tmp_path / "cache")
            assert len(data.load_split(tmp_path / "cache", "val")) == 1014
        (served / "val.en.gz").write_bytes(b"tampered")
        (tmp_path / "cache" / "val.en.gz").unlink(missing_ok=True)
        with pytest.raises(data.CorpusError, match="wrong checksum"):
            data.download(tmp_path / "cache")
    finally:
        server.shutdown()


def test_token_batches_bound_size_group_lengths_and_are_reproducible():
    import random

    rng = random.Random(0)
    pairs = [([5] * rng.randint(2, 30), [1] + [6] * rng.randint(2, 30) + [2]) for _ in range(500)]
    batches = data.token_batches(pairs, batch_tokens=200, seed=1, epoch=0)
    assert sorted(i for b in batches for i in b) == list(range(500))  # every pair exactly once
    for b in batches:
        longest = max(max(len(pairs[i][0]), len(pairs[i][1])) for i in b)
        assert longest * len(b) <= 200
    assert batches == data.token_batches(pairs, batch_tokens=200, seed=1, epoch=0)
    assert batches != data.token_batches(pairs, batch_tokens=200, seed=1, epoch=1)
    padding = sum(max(len(pairs[i][1]) for i in b) * len(b) - sum(len(pairs[i][1]) for i in b) for b in batches)
    assert padding / sum(len(p[1]) for p in pairs) < 0.15  # similar lengths together

    batch = data.collate(pairs, batches[0], PAD_ID)
    assert batch.tgt_in[:, 0].eq(BOS_ID).all()
    assert (batch.tgt_in[:, 1:] == batch.tgt_out[:, :-1]).logical_or(batch.tgt_out[:, :-1] == PAD_ID).all()
    assert batch.tgt_out.eq(EOS_ID).sum() == len(batches[0])


def test_encode_pairs_and_collate_take_special_ids_from_the_tokenizer():
    """Nothing in data.py assumes pad 0 / bos 1 / eos 2: a tokenizer numbering them otherwise is honoured."""

    class Encoding:
        def __init__(self, ids):
            self.ids = ids

    class Renumbered:
        ids = {"<pad>": 7, "<s>": 8, "</s>": 9}

        def token_to_id(self, token):
            return self.ids.get(token)

        def encode_batch(self, texts, add_special_tokens=False):
            return [Encoding([20 + len(word) for word in text.split()]) for text in texts]

    corpus = data.ParallelCorpus(["a bb", "ccc"], ["dd", "e f g"])
    pairs, dropped = data.encode_pairs(Renumbered(), corpus, max_len=10)
    assert dropped == 0 and pairs == [([21, 22, 9], [8, 22, 9]), ([23, 9], [8, 21, 21, 21, 9])]
    batch = data.collate(pairs, [0, 1], pad_id=7)
    assert batch.src.tolist() == [[21, 22, 9], [23, 9, 7]] and batch.n_tokens == 2 + 4
    assert [b.src.tolist() for b in data.iterate_batches(pairs, [[0], [1]], pad_id=7, start=1)] == [[[23, 9]]]


def test_find_corpus_never_downloads_and_says_where(tmp_path, monkeypatch):
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(data.CorpusError, match="MULTI30K_DIR"):
        data.find_corpus()
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "val.de").write_text("Ein Hund.\n")
    assert data.find_corpus(tmp_path / "here") == tmp_path / "here"
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path / "here"))
    assert data.find_corpus() == tmp_path / "here"
