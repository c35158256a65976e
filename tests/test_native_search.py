"""compiled/native_search.py: the whole search in C++ gives the eager search's tokens in fp32 (greedy and beam,
batched and alone, with a forced prefix, min_new_tokens and the no-repeat rule, on the shipped checkpoint and on
a tiny one whose vocabulary is no multiple of 16); int8 stays within 0.3 val BLEU of fp32; it is used only
where it applies, a library in the cache is loaded, not built again, and where it cannot build, decoding
stays on the other paths."""

import ctypes
import logging
import threading
import time
from pathlib import Path

import pytest
import torch

from generation.search import generate
from tests.corpus import DATA_DIR, needs_corpus
from translation import Translator

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints" / "de-en"
SENTENCES = [
    "Ein Mann fährt Fahrrad.",
    "Zwei Hunde spielen im Schnee.",
    "Eine Frau liest ein Buch im Park.",
    "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.",
    "Wo ist der Bahnhof?",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("native")


@pytest.fixture(scope="module")
def shipped(cache):
    """The shipped checkpoint twice: eager, and with the native search (fp32)."""
    eager = Translator.from_pretrained(SHIPPED, device="cpu")
    native = Translator.from_pretrained(SHIPPED, device="cpu")
    search = native.compile(cache_dir=cache)
    if not search.ready:
        pytest.fail(f"the native search did not build here: {search.failure}")
    return eager, native


@pytest.fixture(scope="module")
def val():
    import data

    return data.load_split(DATA_DIR, "val")


def calls(translator) -> int:
    return translator.fast_search.calls


@needs_corpus
@pytest.mark.parametrize("num_beams", [1, 4])
def test_fp32_gives_the_eager_tokens_on_val_alone_and_batched(shipped, val, num_beams):
    eager, native = shipped
    sentences = val.src[:40]
    before = calls(native)
    assert native.translate(sentences, num_beams=num_beams, batch_size=64) == eager.translate(
        sentences, num_beams=num_beams, batch_size=64
    )
    alone = [
        native.translate(s, num_beams=num_beams) == eager.translate(s, num_beams=num_beams) for s in sentences[:20]
    ]
    assert all(alone), alone
    assert calls(native) == before + 21  # one call for the batch, one a sentence


@pytest.mark.parametrize("num_beams", [1, 4])
def test_the_search_rules_give_the_eager_tokens(shipped, num_beams):
    """A forced prefix (text and ids), min_new_tokens, the no-repeat rule off and at 2, a length limit that ends
    searches mid-sentence, and a length penalty: each as the eager search decodes it."""
    eager, native = shipped
    src = torch.tensor([eager.encode_source(SENTENCES[3])[0]])
    prefix = eager.encode_prefix("The woman")
    cases = [
        dict(prefix=prefix),
        dict(min_new_tokens=25, max_new_tokens=30),
        dict(no_repeat_ngram=0),
        dict(no_repeat_ngram=2),
        dict(max_new_tokens=4),
        dict(length_penalty=0.6, max_new_tokens=6),
    ]
    before = calls(native)
    for case in cases:
        case = {"max_new_tokens": 40, "no_repeat_ngram": eager.no_repeat_ngram, **case}
        want = generate(eager.model, src, num_beams=num_beams, **case)
        got = generate(native.model, src, num_beams=num_beams, fast_search=native.fast_search, **case)
        assert torch.equal(got, want), case
    assert calls(native) == before + len(cases)
    assert native.translate(SENTENCES[0], prefix="The", num_beams=num_beams).startswith("The ")


def test_it_steps_aside_where_the_search_asks_for_more(shipped):
    """Head masks, observers (maps), a shortlist and the uncached reference run the Python search."""
    from lens.trace import trace
    from model.heads import HeadMask

    eager, native = shipped
    before = calls(native)
    mask = HeadMask.all_on(native.config).switched_off("decoder", 0, 1)
    assert native.translate(SENTENCES[1], head_mask=mask) == eager.translate(SENTENCES[1], head_mask=mask)
    src = torch.tensor([native.encode_source(SENTENCES[1])[0]])
    generate(native.model, src, 20, 4, use_cache=False, fast_search=native.fast_search)
    trace(native, SENTENCES[1], num_beams=2)
    assert calls(native) == before


def test_the_search_is_the_translators_and_generate_is_handed_it(shipped):
    """compile() keeps the search on the Translator, nothing on the model: generate() runs it only when handed it."""
    eager, native = shipped
    assert not hasattr(native.model, "compiled_search") and eager.fast_search is None
    src = torch.tensor([native.encode_source(SENTENCES[4])[0]])
    before = calls(native)
    alone = generate(native.model, src, 20, 4)
    assert calls(native) == before
    assert torch.equal(generate(native.model, src, 20, 4, fast_search=native.fast_search), alone)
    assert calls(native) == before + 1


def test_tiny_model_with_an_odd_vocabulary(tiny_checkpoint, cache):
    """600 pieces (padded to 608 inside), d_model 32, two layers each: the same tokens as eager."""
    eager = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    native = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    assert native.config.vocab_size % 16 != 0
    assert native.compile(cache_dir=cache).ready
    for beams in (1, 3):
        assert native.translate(SENTENCES, num_beams=beams, max_new_tokens=30) == eager.translate(
            SENTENCES, num_beams=beams, max_new_tokens=30
        )
    assert calls(native) == 2


@needs_corpus
@pytest.mark.slow
def test_int8_stays_within_a_third_of_a_bleu_point_of_fp32(shipped, val, cache):
    """Int8 products (weights 7-bit per row, activations 8-bit per row), the output layer included: on all of
    val at beam 4 the BLEU moves by at most 0.3, and the int8 outputs are not the fp32 ones."""
    import sacrebleu

    _, native = shipped
    int8 = Translator.from_pretrained(SHIPPED, device="cpu", quantize="int8")
    assert int8.compile(cache_dir=cache).ready
    fp32_out = native.translate(val.src, num_beams=4, batch_size=64)
    int8_out = int8.translate(val.src, num_beams=4, batch_size=64)
    fp32_bleu = sacrebleu.corpus_bleu(fp32_out, [val.tgt]).score
    int8_bleu = sacrebleu.corpus_bleu(int8_out, [val.tgt]).score
    assert abs(int8_bleu - fp32_bleu) <= 0.3, (fp32_bleu, int8_bleu)
    assert fp32_out != int8_out and calls(int8) == (len(val.src) + 63) // 64


def test_the_library_is_built_once_then_loaded_from_the_cache(shipped, cache, monkeypatch):
    from compiled import native_search

    eager, _ = shipped
    libraries = list(cache.glob("native-*.so"))
    assert len(libraries) == 1
    stamp = libraries[0].stat().st_mtime_ns
    monkeypatch.setattr(native_search.subprocess, "run", lambda *a, **k: pytest.fail("built again"))
    monkeypatch.setattr(native_search, "library_name", lambda cxx: libraries[0].name)
    again = Translator.from_pretrained(SHIPPED, device="cpu")
    start = time.perf_counter()
    assert again.compile(cache_dir=cache).ready
    assert time.perf_counter() - start < 5 and libraries[0].stat().st_mtime_ns == stamp
    assert again.translate(SENTENCES[2]) == eager.translate(SENTENCES[2])


@pytest.mark.slow  # the library is built again from scratch
def test_a_broken_library_in_the_cache_is_built_again(shipped, cache, tiny_checkpoint, tmp_path):
    import shutil

    built = next(cache.glob("native-*.so"))
    first = tmp_path / built.name
    shutil.copy(built, first)
    first.write_bytes(b"not a library")
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    search = translator.compile(cache_dir=tmp_path)
    assert search.ready, search.failure
    assert first.stat().st_size > 1000


def test_without_a_compiler_it_says_why_once_and_decodes_on(tiny_checkpoint, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("CXX", "no-such-compiler")
    monkeypatch.setattr("shutil.which", lambda name: None)
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    reference = translator.translate(SENTENCES[0])
    with caplog.at_level(logging.WARNING, logger="compiled.native_search"):
        search = translator.compile(cache_dir=tmp_path)
        translator.compile(cache_dir=tmp_path)
    assert not search.ready and "no C++ compiler" in search.failure
    assert sum("native search is off" in r.message for r in caplog.records) == 1
    assert translator.translate(SENTENCES[0]) == reference


def test_new_weights_send_the_search_back_to_python(tiny_checkpoint, cache):
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    search = translator.compile(cache_dir=cache)
    assert search.usable()
    with torch.no_grad():
        translator.model.decoder_layers[0].norm1.weight.add_(0.0)
    assert not search.usable()
    translator.translate(SENTENCES[0])
    assert search.calls == 0


def test_bad_ids_are_refused_by_the_engine(shipped):
    """In words, before the C++ sees them (tests/test_native_fuzz.py drives many more)."""
    _, native = shipped
    search = native.fast_search
    with pytest.raises(ValueError, match="src holds ids outside the vocabulary"):
        search(torch.tensor([[5, 9_999_999, 2]]), 1, 1.0, 10)
    with pytest.raises(ValueError, match="max_new_tokens must be a whole number from 1 to 256, got 10000"):
        search(torch.tensor([[5, 6, 2]]), 1, 1.0, 10_000)


@needs_corpus
def test_the_call_lets_other_threads_run(shipped, val):
    """ctypes lets go of the interpreter lock while the engine translates: a Python thread beside it counts on."""
    _, native = shipped
    counted, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            counted[0] += 1

    thread = threading.Thread(target=count)
    thread.start()
    try:
        start = time.perf_counter()
        native.translate(val.src[:64], num_beams=4, batch_size=64)
        busy = time.perf_counter() - start
        during = counted[0]
    finally:
        stop.set()
        thread.join()
    assert busy > 0.2 and during > 10_000, (busy, during)
    assert isinstance(native.fast_search._lib, ctypes.CDLL)


@needs_corpus
def test_two_threads_at_once_get_what_each_gets_alone(shipped, val):
    """The app runs two model calls at once: the engine's model is read-only and each call has its own scratch."""
    _, native = shipped
    batches = [val.src[:24], val.src[24:48]]
    alone = [native.translate(b, num_beams=4, batch_size=64) for b in batches]
    together = [None, None]

    def run(i):
        together[i] = native.translate(batches[i], num_beams=4, batch_size=64)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone
