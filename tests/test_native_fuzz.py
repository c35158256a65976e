"""No input kills the process: the native search (compiled/native_search.py) and generate() are driven, in a child
process, with empty batches, empty sources, every special id in prefixes at beam 1..8, huge and negative counts,
padding in the wrong place and random valid ids. Every case ends in an answer or a ValueError in words, never in a
signal; where the input is valid, the native search answers what the Python search answers.

The child prints each case before it runs it, so a case that kills it is named."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = ROOT / "checkpoints" / "de-en"

CHILD = textwrap.dedent(r"""
    import random, sys
    import torch
    from generation.search import generate
    from translation import Translator

    torch.set_num_threads(1)
    translator = Translator.from_pretrained(sys.argv[1], device="cpu")
    search = translator.compile(cache_dir=sys.argv[2])
    model, c = translator.model, translator.model.config
    assert search.ready, search.failure
    special = [c.pad_id, c.bos_id, c.eos_id]
    src = torch.tensor([translator.encode_source("Ein Hund rennt im Park.")[0]])
    pair = torch.nn.utils.rnn.pad_sequence([torch.tensor(translator.encode_source(t)[0]) for t in
                                            ("Ein Mann.", "Zwei Frauen spielen Fußball im Park.")],
                                           batch_first=True, padding_value=c.pad_id)
    rng = random.Random(0)

    def native(source, beams=1, penalty=1.0, new=16, least=0, ngram=0, prefix=None):
        return search(source, beams, penalty, new, least, ngram, prefix)

    cases = {
        "native: empty batch": lambda: native(torch.zeros(0, 5, dtype=torch.long)),
        "native: empty sources": lambda: native(torch.zeros(2, 0, dtype=torch.long)),
        "native: one dimension": lambda: native(src[0]),
        "native: floats": lambda: native(src.float()),
        "native: all padding": lambda: native(torch.full((1, 4), c.pad_id)),
        "native: padding first": lambda: native(torch.cat([torch.tensor([[c.pad_id]]), src], dim=1)),
        "native: padding inside": lambda: native(torch.tensor([[5, c.pad_id, 7, c.eos_id]])),
        "native: id past the vocabulary": lambda: native(torch.tensor([[c.vocab_size, c.eos_id]])),
        "native: negative id": lambda: native(torch.tensor([[-3, c.eos_id]])),
        "native: too long": lambda: native(torch.full((1, c.max_len + 1), 5)),
        "native: 0 beams": lambda: native(src, beams=0),
        "native: negative beams": lambda: native(src, beams=-4),
        "native: a million beams": lambda: native(src, beams=10**6),
        "native: NaN length penalty": lambda: native(src, beams=4, penalty=float("nan")),
        "native: 0 new tokens": lambda: native(src, new=0),
        "native: huge new tokens": lambda: native(src, new=10**9),
        "native: negative new tokens": lambda: native(src, new=-1),
        "native: min above max": lambda: native(src, least=17),
        "native: negative min": lambda: native(src, least=-5),
        "native: huge no-repeat": lambda: native(src, ngram=10**6),
        "native: negative no-repeat": lambda: native(src, ngram=-2),
        "native: no-repeat longer than a short output": lambda: native(src, new=2, ngram=3),  # no rule: answered
        "native: prefix too long": lambda: native(src, new=4, prefix=torch.tensor([5] * 5)),
        "native: prefix past the vocabulary": lambda: native(src, prefix=torch.tensor([c.vocab_size + 7])),
        "native: prefix of two dimensions": lambda: native(src, prefix=torch.tensor([[5]])),
        "generate: empty batch": lambda: generate(model, torch.zeros(0, 5, dtype=torch.long), fast_search=search),
        "generate: empty sources": lambda: generate(model, torch.zeros(2, 0, dtype=torch.long), fast_search=search),
        "generate: all padding": lambda: generate(model, torch.full((2, 3), c.pad_id), fast_search=search),
        "generate: id past the vocabulary": lambda: generate(model, torch.tensor([[c.vocab_size, c.eos_id]]),
                                                             fast_search=search),
        "generate: huge max_new_tokens": lambda: generate(model, src, max_new_tokens=10**9, fast_search=search),
        "generate: negative max_new_tokens": lambda: generate(model, src, max_new_tokens=-3, fast_search=search),
    }
    for beams in range(1, 9):
        for token in special:
            for source in (src, pair):
                cases[f"native: prefix [{token}] at beam {beams}, batch {source.size(0)}"] = (
                    lambda b=beams, t=token, s=source: native(s, beams=b, prefix=torch.tensor([t])))
                cases[f"generate: prefix [{token}] at beam {beams}, batch {source.size(0)}"] = (
                    lambda b=beams, t=token, s=source: generate(model, s, 16, b, prefix=[t], fast_search=search))

    for name, run in cases.items():
        print("CASE", name, flush=True)
        try:
            run()
            print("ANSWERED", flush=True)
        except ValueError as err:
            assert str(err).strip(), name
            print("REFUSED", str(err)[:160], flush=True)

    # The C++ entry called directly (no checked_call before it): what Python refuses, it refuses too (-1).
    import ctypes
    from compiled.native_search import MAX_BEAMS
    ints = ctypes.POINTER(ctypes.c_int)

    def direct(ids=(5, 7, c.eos_id), lengths=(3,), beams=1, penalty=1.0, new=16, least=0, ngram=0, prefix=(),
               null=None):
        arrays = {"ids": (ctypes.c_int * max(1, len(ids)))(*ids), "lengths": (ctypes.c_int * max(1, len(lengths)))(*lengths),
                  "prefix": (ctypes.c_int * max(1, len(prefix)))(*prefix), "out": (ctypes.c_int * (max(1, len(lengths)) * max(1, new)))()}
        pointer = {k: None if k == null else ctypes.cast(v, ints) for k, v in arrays.items()}
        engine = None if null == "model" else search._engine
        return search._lib.al_translate(engine, pointer["ids"], pointer["lengths"], len(lengths), beams, penalty, new,
                                        least, ngram, pointer["prefix"], len(prefix), pointer["out"])

    direct_cases = {
        "direct: no model": dict(null="model"), "direct: no ids": dict(null="ids"), "direct: no lengths": dict(null="lengths"),
        "direct: no output": dict(null="out"), "direct: a prefix length and no prefix": dict(prefix=(5,), null="prefix"),
        "direct: no sentence": dict(lengths=()), "direct: a length of 0": dict(lengths=(0,), ids=()),
        "direct: too long": dict(ids=(5,) * (c.max_len + 1), lengths=(c.max_len + 1,)),
        "direct: padding inside": dict(ids=(5, c.pad_id, c.eos_id)), "direct: id past the vocabulary": dict(ids=(c.vocab_size, 5, 2)),
        "direct: negative id": dict(ids=(-1, 5, 2)), "direct: 0 beams": dict(beams=0), "direct: more beams than kept": dict(beams=MAX_BEAMS + 1),
        "direct: a million beams": dict(beams=10**6), "direct: NaN penalty": dict(penalty=float("nan")),
        "direct: infinite penalty": dict(penalty=float("inf")), "direct: minus infinite penalty": dict(penalty=float("-inf")),
        "direct: 0 new": dict(new=0), "direct: new past max_len": dict(new=c.max_len + 1), "direct: negative min": dict(least=-1),
        "direct: min above max": dict(least=17), "direct: negative no-repeat": dict(ngram=-1), "direct: no-repeat above max": dict(ngram=17),
        "direct: prefix too long": dict(new=2, prefix=(5, 6, 7)),
        "direct: prefix of padding": dict(prefix=(c.pad_id,)), "direct: prefix of BOS": dict(prefix=(c.bos_id,)),
        "direct: prefix of EOS": dict(prefix=(c.eos_id,)), "direct: prefix past the vocabulary": dict(prefix=(c.vocab_size,)),
    }
    for name, kwargs in direct_cases.items():
        print("CASE", name, flush=True)
        status = direct(**kwargs)
        assert status == -1, (name, status)
        print("REFUSED", flush=True)
    assert direct() == 0 and direct(prefix=(5,)) == 0, "a valid direct call answers"
    three, one, room = (ctypes.c_int * 3)(5, 7, c.eos_id), (ctypes.c_int * 1)(3), (ctypes.c_int * 16)()
    negative = search._lib.al_translate(search._engine, ctypes.cast(three, ints), ctypes.cast(one, ints), 1, 1, 1.0, 16,
                                        0, 0, None, -1, ctypes.cast(room, ints))
    assert negative == -1, "a negative prefix length"

    # valid random inputs: the native search answers as the Python search does
    for trial in range(12):
        beams, batch = rng.randint(1, 5), rng.randint(1, 3)
        lengths = [rng.randint(1, 12) for _ in range(batch)]
        rows = [[rng.randrange(4, c.vocab_size) for _ in range(n - 1)] + [c.eos_id] for n in lengths]
        source = torch.nn.utils.rnn.pad_sequence([torch.tensor(r) for r in rows], batch_first=True, padding_value=c.pad_id)
        prefix = [rng.randrange(4, c.vocab_size)] if trial % 3 == 0 else None
        print("CASE random", trial, beams, lengths, prefix, flush=True)
        fast = generate(model, source, 12, beams, prefix=prefix, fast_search=search)
        slow = generate(model, source, 12, beams, prefix=prefix)
        assert fast.tolist() == slow.tolist(), (trial, fast.tolist(), slow.tolist())
        assert search.calls > 0
    print("DONE", len(cases), "cases", flush=True)
""")


@pytest.mark.slow
def test_no_input_kills_the_process_and_valid_ones_answer_as_eager(tmp_path):
    pytest.importorskip("torch")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(CHECKPOINT), str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = done.stdout.splitlines()
    last = next((line for line in reversed(lines) if line.startswith("CASE")), "before the first case")
    assert done.returncode == 0, f"the child died ({done.returncode}) at {last}:\n{done.stderr[-2000:]}"
    assert lines[-1].startswith("DONE"), lines[-5:]
    refused = [lines[i - 1] for i, line in enumerate(lines) if line.startswith("REFUSED")]
    for case in ("empty batch", "empty sources", "prefix [2] at beam 4", "huge no-repeat", "NaN length penalty"):
        assert any(case in line for line in refused), (case, refused)
    assert not any("no-repeat longer than a short output" in line for line in refused), "an n-gram that cannot bind"
    direct = [line for line in lines if line.startswith("CASE direct:")]
    assert len(direct) >= 28 and all(lines[lines.index(line) + 1] == "REFUSED" for line in direct), direct
