"""The fast generation paths: BLAS and int8 linear layers, the growing KV cache, step weights kept
between calls, and Translator(quantize="int8"). fp32 must give the reference decoder's tokens."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from generation import generate
from generation.cache import KVCache
from generation.step_linear import BlasLinear, Int8Linear, StepLinear, step_linear
from generation.step_weights import step_weights
from lens.maps import explain, teacher_forced
from tests.corpus import DATA_DIR, needs_corpus
from tests.test_model import batch_of_sources, tiny_model
from translation import Translator

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints" / "de-en"
PAD = 0


def test_step_linears_compute_the_linear_layer():
    torch.manual_seed(0)
    weight, bias = torch.randn(48, 32), torch.randn(48)
    for rows in (1, 4, 33):
        x = torch.randn(rows, 32)
        reference = F.linear(x, weight, bias)
        assert torch.allclose(StepLinear(weight, bias)(x), reference, atol=1e-5)
        assert torch.allclose(BlasLinear(weight, bias)(x), reference, atol=1e-5)
        assert torch.allclose(BlasLinear(weight, None)(x), F.linear(x, weight), atol=1e-5)
        int8 = Int8Linear(weight, bias)(x)
        # int8 weights and 7-bit activations: off by a small fraction of the output's scale, never more
        assert (int8 - reference).abs().max() < 0.05 * reference.abs().max()


def test_blas_linear_takes_any_layout_of_x_and_keeps_torch_tensors():
    torch.manual_seed(1)
    weight, bias = torch.randn(24, 16), torch.randn(24)
    x = torch.randn(16, 5).t()  # (5, 16), not contiguous
    out = BlasLinear(weight, bias)(x)
    assert isinstance(out, torch.Tensor) and out.shape == (5, 24)
    assert torch.allclose(out, F.linear(x, weight, bias), atol=1e-5)
    assert type(step_linear(weight, bias)) is BlasLinear
    assert type(step_linear(weight.double(), bias.double())) is StepLinear  # other dtypes keep torch's kernels


def test_numpy_blas_stays_on_one_thread_beside_torchs_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = torch.get_num_threads()
    blas = threadpoolctl.ThreadpoolController().select(user_api="blas")
    try:
        torch.set_num_threads(2)
        blas.limit(limits=2)  # what numpy's OpenBLAS starts with on two cores
        generate(tiny_model(), batch_of_sources(), max_new_tokens=3)
        assert {pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"} == {1}
    finally:
        torch.set_num_threads(before)


def test_precision_names_are_checked():
    weight = torch.randn(8, 4)
    with pytest.raises(ValueError, match="precision must be one of"):
        step_linear(weight, None, "int4")
    with pytest.raises(ValueError, match="precision must be one of"):
        step_linear(weight, None, "fp16")
    with pytest.raises(ValueError, match="precision must be one of"):
        generate(tiny_model(), batch_of_sources(), max_new_tokens=3, precision="bf16")


@pytest.mark.parametrize("num_beams", [1, 3])
def test_growing_cache_gives_the_reference_tokens_batched_and_alone(num_beams, monkeypatch):
    # Growing 2 positions at a time crosses many growths (and beam reorders across them).
    monkeypatch.setattr(KVCache, "GROW_STEPS", 2)
    model = tiny_model(seed=31)
    src = batch_of_sources()
    fast = generate(model, src, max_new_tokens=15, min_new_tokens=15, num_beams=num_beams)
    reference = generate(model, src, max_new_tokens=15, min_new_tokens=15, num_beams=num_beams, use_cache=False)
    assert fast.tolist() == reference.tolist()
    for row in range(src.size(0)):
        alone = generate(model, src[row : row + 1], max_new_tokens=15, min_new_tokens=15, num_beams=num_beams)
        ids = [t for t in alone[0].tolist() if t != PAD]
        assert ids == [t for t in reference[row].tolist() if t != PAD], row


def test_kv_cache_refuses_more_than_its_capacity():
    cache = KVCache.empty(rows=2, n_heads=1, capacity=3, d_k=4, like=torch.zeros(1))
    for _ in range(3):
        keys, _ = cache.append(torch.ones(2, 1, 1, 4), torch.ones(2, 1, 1, 4))
    assert keys.shape == (2, 1, 3, 4)
    with pytest.raises(RuntimeError, match="capacity 3"):
        cache.append(torch.ones(2, 1, 1, 4), torch.ones(2, 1, 1, 4))


def test_kept_step_weights_follow_a_change_of_the_parameters():
    model = tiny_model(seed=32)
    src = batch_of_sources()
    generate(model, src, max_new_tokens=8)  # builds and keeps the step weights
    with torch.no_grad():
        for p in model.decoder_layers.parameters():
            p.mul_(1.5)  # in place, as an optimizer step does
    fast = generate(model, src, max_new_tokens=8, num_beams=2)
    assert fast.tolist() == generate(model, src, max_new_tokens=8, num_beams=2, use_cache=False).tolist()


def test_int8_generation_runs_and_mostly_agrees_on_a_tiny_model():
    model = tiny_model(seed=33)
    src = batch_of_sources()
    int8 = generate(model, src, max_new_tokens=10, num_beams=2, precision="int8")
    fp32 = generate(model, src, max_new_tokens=10, num_beams=2)
    assert int8.shape[0] == 4 and int8.dtype == torch.long
    assert int8[:, 0].tolist() == fp32[:, 0].tolist()  # a random model's logits are close: first tokens agree


def test_quantize_argument_is_checked(tiny_checkpoint):
    with pytest.raises(ValueError, match="quantize must be None or 'int8'"):
        Translator.from_pretrained(tiny_checkpoint, device="cpu", quantize="int4")


@pytest.fixture(scope="module")
def shipped():
    if not (SHIPPED / "model.safetensors").is_file():
        pytest.skip(f"no checkpoint in {SHIPPED}")
    return Translator.from_pretrained(SHIPPED, device="cpu"), Translator.from_pretrained(
        SHIPPED, device="cpu", quantize="int8"
    )


@needs_corpus
@pytest.mark.slow
def test_int8_translations_match_fp32_on_most_val_sentences(shipped):
    import data

    fp32, int8 = shipped
    sentences = data.load_split(DATA_DIR, "val").src  # all 1,014
    fp32.no_repeat_ngram = int8.no_repeat_ngram = 0  # the arithmetic alone: the repetition rule moves a few more
    try:  # sentences onto another path (917 of 1,014 match without it, 907 with it)
        a = fp32.translate(sentences, num_beams=4)
        b = int8.translate(sentences, num_beams=4)
    finally:
        fp32.no_repeat_ngram = int8.no_repeat_ngram = 3
    same = sum(x == y for x, y in zip(a, b))
    assert same >= 0.9 * len(sentences), f"int8 matches fp32 on only {same} of {len(sentences)}"


def test_int8_never_crashes_on_odd_inputs_and_explains_exactly(shipped):
    fp32, int8 = shipped
    odd = ["", "   ", "Hallo " * 400, "Ein Hund 🐕 läuft! 🎉", "<pad> <s> </s>", "<pad>", "ß" * 50, "\u200b\n\t"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the overlong one warns that it was cut
        out = int8.translate(odd, num_beams=4)
        assert len(out) == len(odd) and all(isinstance(t, str) for t in out)
        assert out[0] == "" and out[1] == ""
        assert int8.translate(odd[3:5], num_beams=1)  # greedy too
        for text in odd[3:]:  # the overlong one decodes 256 steps: translated above, not explained again
            explained = explain(int8, text, num_beams=4)
            src_ids, _ = int8.encode_source(text)
            out_ids = [i for i in int8.generate_ids([src_ids], 4, 1.0, None)[0] if i != PAD]
            # The maps come from the fp32 teacher-forced pass: fp32's maps of that output, up to the rounding of
            # products of another shape (int8 maps would be off by about 1e-2).
            exact = teacher_forced(fp32, src_ids, out_ids)
            assert explained.target_tokens == exact.target_tokens
            np.testing.assert_allclose(explained.cross, exact.cross, rtol=0, atol=1e-5)
            np.testing.assert_allclose(explained.decoder, exact.decoder, rtol=0, atol=1e-5)


def test_translator_stores_decoder_matrices_transposed_and_steps_read_them_in_place(tiny_checkpoint, tmp_path):
    import numpy as np

    from model.transformer import Transformer

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    layer = translator.model.decoder_layers[0]
    for linear in (layer.self_attn.in_proj, layer.cross_attn.in_proj, layer.ff.linear1, layer.ff.linear2):
        assert linear.weight.stride() == (1, linear.weight.size(0))  # W^T row-major, the shape unchanged
    steps = step_weights(translator.model)
    assert np.shares_memory(steps.layers[0].ff[0].weight, layer.ff.linear1.weight.detach().numpy())
    assert np.shares_memory(steps.layers[0].cross_attn[0].weight, layer.cross_attn.in_proj.weight.detach().numpy())
    # the same tokens as the checkpoint's model in its usual layout, and the same file when saved
    plain = Transformer.from_pretrained(tiny_checkpoint)
    src = batch_of_sources()
    for beams in (1, 3):
        assert (
            generate(translator.model, src, max_new_tokens=12, num_beams=beams).tolist()
            == generate(plain, src, max_new_tokens=12, num_beams=beams, use_cache=False).tolist()
        )
    handed_in = Transformer.from_pretrained(tiny_checkpoint)
    Translator(handed_in, translator.tokenizer, device="cpu")  # e.g. a model being trained, for val BLEU
    assert all(p.is_contiguous() for p in handed_in.parameters())  # keeps its layout
    again = Transformer.from_pretrained(translator.save_pretrained(tmp_path / "saved"))
    for (name, a), b in zip(again.state_dict().items(), plain.state_dict().values()):
        assert torch.equal(a, b), name
