"""compiled/decoder.py: the compiled decoder step gives the eager path's tokens (greedy and beam, batched and
alone, past the first cache growth, with a forced prefix), is used only where it fits, and falls back
cleanly where it cannot compile; a package in the cache is loaded, not built again. Two builds for the
module (the tiny checkpoint, fp32 and int8: about 25-50 s each here)."""

import logging

import pytest
import torch

from translation import Translator

pytestmark = pytest.mark.slow
SENTENCES = [
    "Ein Mann fährt Fahrrad.",
    "Zwei Hunde spielen im Schnee.",
    "Eine Frau liest ein Buch im Park.",
    "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau.",
]


@pytest.fixture(scope="module")
def pair(tiny_checkpoint, tmp_path_factory):
    """The tiny checkpoint twice: eager, and with the compiled step."""
    eager = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    compiled = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    step = compiled.compile(cache_dir=tmp_path_factory.mktemp("compiled"), native=False)
    if not step.ready:
        pytest.fail(f"the compiled step did not compile here: {step.failure}")
    assert step.built and sorted(step.packages) == ["encoder", "step"]
    assert all(path.parent == step.cache_dir and path.exists() for path in step.packages.values())
    return eager, compiled


def used(translator) -> int:
    """How many decoders the compiled step has run so far."""
    return translator.model.compiled_step.calls


@pytest.mark.parametrize("num_beams", [1, 4])
def test_compiled_and_eager_give_the_same_tokens_batched_and_alone(pair, num_beams):
    eager, compiled = pair
    before = used(compiled)
    for max_new_tokens in (5, 40):  # 40: the cache grows past its first 16 positions
        assert compiled.translate(SENTENCES, num_beams=num_beams, max_new_tokens=max_new_tokens) == eager.translate(
            SENTENCES, num_beams=num_beams, max_new_tokens=max_new_tokens
        )
        for sentence in SENTENCES:
            assert compiled.translate(sentence, num_beams=num_beams, max_new_tokens=max_new_tokens) == eager.translate(
                sentence, num_beams=num_beams, max_new_tokens=max_new_tokens
            )
    assert used(compiled) > before  # the compiled step did the decoding


def test_the_step_ranks_with_the_bans_as_the_eager_search_does(pair):
    """The log-softmax and top-k inside the compiled step, with a banned id (the one it likes best) added as -inf:
    the same ids, in the same order, and the same log-probabilities as ranking its logits eagerly."""
    from compiled.decoder import TOP, CompiledDecoder
    from generation.bans import Banned

    eager, compiled = pair
    config, step = eager.config, compiled.model.compiled_step
    src = torch.tensor([eager.encode_source(SENTENCES[0])[0]])
    tokens = torch.full((3, 1), config.bos_id)
    logits = CompiledDecoder(step, src, 3, 10)(tokens)[0]  # (3, V)
    banned = Banned(config, 5, src.device).bias(0).clone()
    assert (
        banned[[config.pad_id, config.bos_id, config.eos_id]].isneginf().all()
        and banned.isfinite().sum() == config.vocab_size - 3
    )
    assert Banned(config, 5, src.device).bias(5).isneginf().sum() == 2  # EOS allowed from min_new_tokens on
    favourite = int(logits[0].argmax())
    banned[favourite] = float("-inf")
    top, ids = CompiledDecoder(step, src, 3, 10).ranked(tokens, banned)
    want_top, want_ids = (logits + banned).log_softmax(dim=-1).topk(TOP, dim=1)
    assert torch.equal(ids, want_ids) and favourite not in ids[0].tolist()
    torch.testing.assert_close(top, want_top)


def test_a_forced_prefix_and_the_explained_maps_are_the_eager_ones(pair):
    eager, compiled = pair
    ids = eager.encode_prefix("A man")
    assert compiled.translate(SENTENCES[0], prefix=ids) == eager.translate(SENTENCES[0], prefix=ids)
    a, b = compiled.explain(SENTENCES[1]), eager.explain(SENTENCES[1])
    assert a.target_tokens == b.target_tokens
    torch.testing.assert_close(torch.from_numpy(a.cross), torch.from_numpy(b.cross))


def test_searches_it_does_not_fit_stay_eager(pair):
    from model.heads import HeadMask

    eager, compiled = pair
    before = used(compiled)
    mask = HeadMask.all_on(compiled.config).switched_off("cross", 0, 0)
    assert (
        compiled.explain(SENTENCES[0], head_mask=mask).target_tokens
        == eager.explain(SENTENCES[0], head_mask=mask).target_tokens
    )
    many = SENTENCES * 3  # 12 sentences x 4 beams: more rows than the compiled step takes
    assert compiled.translate(many, num_beams=4, batch_size=12) == eager.translate(many, num_beams=4, batch_size=12)
    assert used(compiled) == before


def test_changed_weights_are_never_decoded_with_the_frozen_ones(tiny_checkpoint, pair):
    _, compiled = pair
    step = compiled.model.compiled_step
    assert step.usable()
    with torch.no_grad():
        compiled.model.decoder_layers[0].norm1.weight.add_(
            0.0
        )  # a write: the frozen graph no longer holds these weights
    assert not step.usable()


def test_without_a_compiler_it_says_why_once_and_decodes_eagerly(tiny_checkpoint, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("CXX", "no-such-compiler")
    monkeypatch.setattr("shutil.which", lambda name: None)
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    reference = translator.translate(SENTENCES[0])
    with caplog.at_level(logging.WARNING, logger="compiled.decoder"):
        step = translator.compile(cache_dir=tmp_path, native=False)
        translator.compile(cache_dir=tmp_path, native=False)  # asked again: said once
    assert not step.ready and "no C++ compiler" in step.failure
    assert sum("compiled decoder step is off" in r.message for r in caplog.records) == 1
    assert translator.translate(SENTENCES[0]) == reference


def test_a_call_that_fails_falls_back_to_eager_mid_search(tiny_checkpoint, monkeypatch, caplog):
    """The compiled packages stood in for by the eager graphs (so no compiling here), failing at the third step
    as a package call that fails (compiled/package_runner.py's check): the search goes on eagerly, from a rebuilt cache."""
    from compiled.decoder import TOP, CompiledDecoder, CompiledStep, versions
    from compiled.step_graph import EncoderGraph
    from generation.step import CachedDecoder

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    reference = translator.translate(SENTENCES, num_beams=4, max_new_tokens=20)
    step = CompiledStep(translator.model)
    step.ready, step._versions = True, versions(translator.model)
    calls = []

    def stand_in(self, tokens, banned):
        if not hasattr(self, "shadow"):
            self.shadow = CachedDecoder(
                step.model, self.memory, self.src_mask, tokens.size(0) // self.memory.size(0), self.capacity
            )
        calls.append(tokens.size(1))
        if len(calls) == 3:
            raise RuntimeError("the compiled package failed to run the step (AOTInductor error 1)")
        logits = self.shadow(tokens)[0]  # and the ranking, as StepGraph's
        return [logits, *(logits + banned).float().log_softmax(dim=-1).topk(min(TOP, logits.size(1)), dim=1)]

    reorder = CompiledDecoder.reorder

    def reorder_both(self, rows, sentences=None):
        if self.eager is None:
            self.shadow.reorder(rows, sentences)
        reorder(self, rows, sentences)

    monkeypatch.setattr(
        CompiledStep, "encode", lambda self, src: list(EncoderGraph(self.model)(src, self.model.embed(src)))
    )  # run eagerly
    monkeypatch.setattr(CompiledDecoder, "_compiled", stand_in)
    monkeypatch.setattr(CompiledDecoder, "reorder", reorder_both)
    translator.model.compiled_step = step
    with caplog.at_level(logging.WARNING, logger="compiled.decoder"):
        got = translator.translate(SENTENCES, num_beams=4, max_new_tokens=20)
    assert len(calls) == 3 and got == reference
    assert "off from now on" in caplog.text and step.failure.startswith("RuntimeError") and not step.usable()


def test_int8_weights_in_the_compiled_step_stay_close_to_fp32(pair, tiny_checkpoint):
    """quantize="int8" compiles a step with weight-only int8 matrices: its logits stay within int8's rounding."""
    from compiled.decoder import CompiledDecoder

    fp32 = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    int8 = Translator.from_pretrained(tiny_checkpoint, device="cpu", quantize="int8")
    fp32_step = pair[1].model.compiled_step
    step = int8.compile(
        cache_dir=fp32_step.cache_dir, native=False
    )  # the fp32 encoder's package is shared: only the step is built
    assert step.ready and step.precision == "int8", step.failure
    assert (
        step.packages["encoder"] == fp32_step.packages["encoder"]
        and step.packages["step"] != fp32_step.packages["step"]
    )
    src = torch.tensor([int8.encode_source(SENTENCES[2])[0]])
    with torch.inference_mode():
        decoder = CompiledDecoder(step, src, 1, 8)
        tokens = torch.tensor([[int8.config.bos_id]])
        got = decoder(tokens)[0]
        want = fp32.model(src, tokens)[0, -1]
    assert (got - want).abs().max() <= 0.05 * want.abs().max()
    assert not torch.equal(got, want)  # int8 matrices, not the fp32 ones
    before = step.calls
    int8.translate(SENTENCES[0], num_beams=4)
    assert step.calls == before + 1  # an int8 translator decodes with it


def test_the_package_in_the_cache_is_loaded_not_built_again(pair, tiny_checkpoint):
    eager, compiled = pair
    first = compiled.model.compiled_step
    again = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    step = again.compile(cache_dir=first.cache_dir, native=False)
    assert step.ready and not step.built and step.packages == first.packages
    assert step.seconds < first.seconds / 5  # loading, not compiling
    assert again.translate(SENTENCES, num_beams=4) == eager.translate(SENTENCES, num_beams=4)
    assert step.calls == 1


def test_a_package_is_named_for_everything_it_is_built_from(tiny_checkpoint, tmp_path):
    from compiled.ahead_of_time import packages

    model = Translator.from_pretrained(tiny_checkpoint, device="cpu").model
    names = packages(tmp_path, model, "fp32", 1)
    assert names == packages(tmp_path, Translator.from_pretrained(tiny_checkpoint, device="cpu").model, "fp32", 1)
    int8, threads = packages(tmp_path, model, "int8", 1), packages(tmp_path, model, "fp32", 2)
    assert int8["encoder"] == names["encoder"] and int8["step"] != names["step"]  # the encoder stays fp32
    assert len({names["step"], int8["step"], threads["step"]}) == 3 and threads["encoder"] != names["encoder"]
    with torch.no_grad():
        model.decoder_layers[0].ff.linear1.bias[0] += 1e-3
    changed = packages(tmp_path, model, "fp32", 1)
    assert changed["step"] != names["step"] and changed["encoder"] != names["encoder"]


def test_a_broken_package_in_the_cache_is_built_again(pair, tiny_checkpoint, tmp_path, monkeypatch, caplog):
    """The build stood in for by a copy of the packages the fixture built (building is tested above): the
    broken step package is noticed and replaced, the good encoder package kept, and both decode."""
    import shutil

    import compiled.decoder

    built = pair[1].model.compiled_step.packages
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    shutil.copy(built["encoder"], tmp_path / built["encoder"].name)
    broken = tmp_path / built["step"].name
    broken.write_bytes(b"PK\x03\x04 cut short")
    asked = {}

    def copy_built(model, precision, threads, wanted, cache):
        asked.update(wanted)
        for name, path in wanted.items():
            shutil.copy(built[name], path)

    monkeypatch.setattr(compiled.decoder, "build_in_child", copy_built)
    with caplog.at_level(logging.WARNING, logger="compiled.decoder"):
        step = translator.compile(cache_dir=tmp_path, native=False)
    assert step.ready and step.built and asked == {"step": broken}, step.failure
    assert "does not load" in caplog.text and broken.stat().st_size == built["step"].stat().st_size
    assert translator.translate(SENTENCES, num_beams=4) == pair[0].translate(SENTENCES, num_beams=4)
    assert step.calls == 1


def test_a_failing_build_says_what_failed_and_decoding_stays_eager(tiny_checkpoint, tmp_path):
    from compiled.decoder import CompiledStep

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    reference = translator.translate(SENTENCES[1])
    step = translator.model.compiled_step = CompiledStep(translator.model, tmp_path, precision="int4")
    assert not step.compile()
    assert step.failure.startswith("RuntimeError: building the compiled step failed (2)")
    assert "invalid choice: 'int4'" in step.failure
    assert not list(tmp_path.glob("*.pt2")) and translator.translate(SENTENCES[1]) == reference


def test_the_pages_the_weights_were_copied_from_are_given_back(pair):
    """Creating a package's model copies its weights out of the library; the read-only pages they came from
    are dropped from memory after (compiled/package_memory.py), and the step still gives the same logits."""
    from compiled.package_runner import PackageRunner
    from compiled.step_graph import example_inputs

    step = pair[1].model.compiled_step
    library = step.packages["step"].with_suffix(".so")

    def resident_kb() -> int:
        kb, ours = 0, False
        with open("/proc/self/smaps") as smaps:
            for line in smaps:
                fields = line.split()
                if "-" in fields[0] and len(fields) >= 5:
                    ours = fields[1] == "r--p" and len(fields) > 5 and fields[5] == str(library.resolve())
                elif ours and fields[0] == "Rss:":
                    kb += int(fields[1])
        return kb

    runner = PackageRunner(step.packages["step"], 1)
    assert runner.released > 0 and resident_kb() < runner.released // 1024 // 4
    inputs = example_inputs(step.model)
    torch.testing.assert_close(runner([t.clone() for t in inputs])[0], step(*[t.clone() for t in inputs])[0])


def test_the_constants_a_package_never_reads_are_found_in_its_wrapper(tmp_path):
    """Freezing keeps each original matrix beside its packed copy; only a constant that the generated code
    binds and never uses is unused (names inside strings do not count)."""
    import zipfile

    from compiled.package_memory import unused_constants

    source = """
    constants_info_[0].name = "w";
    constants_info_[0].original_fqn = "layers.0.w";
    constants_info_[1].name = "constant1";
    constants_info_[1].original_fqn = "constant1";
    [[maybe_unused]] auto& w = constants_->at(0);
    [[maybe_unused]] auto& constant1 = constants_->at(1);
    kernel((const float*)(constant1.data_ptr()), "w");
    """
    package = tmp_path / "step-x.pt2"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("step-x/data/aotinductor/model/abc.wrapper.cpp", source)
    assert unused_constants(package) == {"layers.0.w"}
    with zipfile.ZipFile(package, "w") as archive:  # no wrapper source: nothing is taken for unused
        archive.writestr("step-x/archive_format", "pt2")
    assert unused_constants(package) == set()


def test_another_thread_runs_while_the_compiled_step_runs(pair):
    """The package is called without the interpreter lock (compiled/package_runner.py): a Python loop beside a
    thread that runs the step over and over keeps most of its speed."""
    import threading
    import time

    from compiled.step_graph import example_inputs

    step = pair[1].model.compiled_step
    inputs = example_inputs(step.model, sentences=4, beams=4, cached=64, source=40)  # 16 rows: a long call

    def count(seconds: float) -> int:
        n, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            n += 1
        return n

    alone, stop, calls = count(0.5), threading.Event(), []

    def busy():
        while not stop.is_set():
            step(*inputs)
            calls.append(1)

    thread = threading.Thread(target=busy)
    thread.start()
    beside = count(0.5)
    stop.set()
    thread.join()
    assert calls and beside > 0.4 * alone  # measured: 0.77 without the lock, 0.12 with it


def test_an_input_the_packages_cannot_take_is_refused_in_words_before_them(pair):
    """An empty batch or source once reached the compiled step and killed the process (SIGFPE): now generate() and
    the step itself refuse it first (tests/test_native_fuzz.py drives the native search the same way)."""
    from generation.search import generate

    _, compiled = pair
    model, step = compiled.model, compiled.model.compiled_step
    before = used(compiled)
    for src in (torch.zeros(0, 5, dtype=torch.long), torch.zeros(2, 0, dtype=torch.long)):
        with pytest.raises(ValueError, match="no sentence to translate"):
            generate(model, src)
        with pytest.raises(ValueError, match="no sentence to translate"):
            step.decoder(src, 4, 16)
    with pytest.raises(ValueError, match="rows"):
        step.decoder(torch.tensor([[5, 2]]), step.max_rows + 1, 16)
    with pytest.raises(ValueError, match="capacity"):
        step.decoder(torch.tensor([[5, 2]]), 1, 0)
    assert used(compiled) == before
