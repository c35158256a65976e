"""generation/shortlist.py and training/shortlist.py: the table counts what the corpus holds, candidates always
hold EOS and forced pieces, an unrestricted shortlist gives the full output layer's tokens, a narrow one
never writes a piece outside it, and a file for another vocabulary is refused."""

import pytest
import torch

from generation.shortlist import Shortlist
from tests.corpus import DATA_DIR
from translation import Translator

SENTENCES = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee."]


def test_the_table_ranks_the_english_pieces_seen_with_a_german_piece(tiny_translator):
    from training.shortlist import build

    tok = tiny_translator.tokenizer
    german = ["Hund läuft", "Hund schläft", "Katze schläft"]
    english = ["dog runs", "dog sleeps", "cat sleeps"]
    table = build(tok, german, english, per_piece=3, frequent=2)
    hund = tok.encode("Hund", add_special_tokens=False).ids[0]
    dog = set(tok.encode("dog", add_special_tokens=False).ids)
    assert dog & set(table.table[hund].tolist())  # seen together in two of two pairs
    never = tok.encode("Pferd", add_special_tokens=False).ids[0]
    if never not in {i for s in german for i in tok.encode(s, add_special_tokens=False).ids}:
        assert (table.table[never] == -1).all()  # never seen: no candidates of its own
    assert table.frequent.numel() == 2


def test_candidates_hold_eos_and_the_forced_pieces(tiny_translator):
    V = tiny_translator.config.vocab_size
    shortlist = Shortlist(torch.full((V, 2), -1), torch.tensor([5, 6]))
    ids = shortlist.candidates([[7, 8]], [2, 42])
    assert ids.tolist() == [2, 5, 6, 42]


def test_an_unrestricted_shortlist_gives_the_full_tokens_and_a_narrow_one_stays_inside(tiny_checkpoint):
    full = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    short = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    V = full.config.vocab_size
    short.shortlist = Shortlist(torch.full((V, 1), -1), torch.arange(V))  # every piece a candidate
    for beams in (1, 4):
        assert short.translate(SENTENCES, num_beams=beams, max_new_tokens=12) == full.translate(
            SENTENCES, num_beams=beams, max_new_tokens=12
        )
    narrow = torch.arange(4, 40)
    short.shortlist = Shortlist(torch.full((V, 1), -1), narrow)
    out = short.generate_ids([short.encode_source(SENTENCES[0])[0]], 4, 1.0, 12)[0]
    allowed = set(narrow.tolist()) | {short.config.eos_id, short.config.pad_id}
    assert set(out) <= allowed


def test_a_shortlist_for_another_vocabulary_is_refused(tiny_checkpoint, tmp_path):
    V = Translator.from_pretrained(tiny_checkpoint, device="cpu").config.vocab_size
    Shortlist(torch.full((V + 5, 1), V + 3), torch.tensor([1])).save(tmp_path)
    with pytest.raises(ValueError, match="another vocabulary"):
        Shortlist.load(tmp_path, V)
    with pytest.raises(FileNotFoundError, match="python -m training.shortlist"):
        Shortlist.load(tmp_path / "missing", V)


def test_the_shipped_shortlist_loads_and_keeps_most_val_translations(tiny_checkpoint):
    from pathlib import Path

    import data

    shipped = Path(__file__).resolve().parent.parent / "checkpoints" / "de-en"
    if not (shipped / "shortlist.safetensors").is_file():
        pytest.skip("the shipped checkpoint has no shortlist")
    full = Translator.from_pretrained(shipped, device="cpu")
    short = Translator.from_pretrained(shipped, device="cpu")
    short.load_shortlist(shipped)
    val = data.load_split(DATA_DIR, "val").src[:40]
    same = sum(a == b for a, b in zip(full.translate(val), short.translate(val)))
    assert same >= 34, same  # 191 of 200 on val were identical when it was built
