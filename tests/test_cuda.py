"""On a GPU the model computes what it computes on the CPU. Runs where CUDA is present, else skips.

Tolerances (fp32 on the GPU with TF32 off, so both sides do IEEE float32 matmuls, in another order):
- fp32 logits within 1e-3 of the CPU's (they are ~10 in size: float32 summation order, not a bug);
  attention maps (probabilities) within 1e-5; greedy translations identical for at least 95% of
  the sentences (a near-tie may flip a token).
- bf16 autocast against CPU fp32: the same top-1 token at at least 95% of the positions, and the
  log-probability of the CPU's top-1 token within 0.1 on average (bf16 keeps 8 bits of mantissa).
- bf16-autocast training: each of 5 steps' loss within 2% of fp32 training on the CPU.
"""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from generation import generate
from lens.maps import explain
from model import Transformer, TransformerConfig
from tests.corpus import DATA_DIR, HAS_CORPUS
from translation import Translator

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason=f"no CUDA GPU here (torch {torch.__version__}, CUDA build {torch.version.cuda or 'none'})",
)

SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / "de-en"
FALLBACK = [
    "Ein Mann fährt Fahrrad.",
    "Zwei Hunde spielen im Schnee.",
    "Eine Frau liest ein Buch im Park.",
    "Kinder spielen Fußball auf einer Wiese.",
    "Ein Koch bereitet in einer Küche Essen zu.",
]


@pytest.fixture(autouse=True)
def no_tf32():
    """TF32 would round matmul inputs to 10 bits: fp32 on the GPU must mean fp32."""
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = before


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    if not HAS_CORPUS:
        return FALLBACK
    import data

    return data.load_split(DATA_DIR, "val").src[:40]


@pytest.fixture(scope="module")
def translators():
    return (Translator.from_pretrained(SHIPPED, device="cpu"), Translator.from_pretrained(SHIPPED, device="cuda"))


def batch_of(translator: Translator, sentences: list[str]) -> torch.Tensor:
    rows = [translator.encode_source(s)[0] for s in sentences]
    src = torch.full((len(rows), max(map(len, rows))), translator.config.pad_id, dtype=torch.long)
    for i, ids in enumerate(rows):
        src[i, : len(ids)] = torch.tensor(ids)
    return src  # (B, S)


def test_fp32_logits_and_greedy_translations_match_the_cpu(translators, sentences):
    cpu, gpu = translators
    src = batch_of(cpu, sentences)  # (B, S)
    tgt = torch.cat([torch.full((len(src), 1), cpu.config.bos_id), generate(cpu.model, src, max_new_tokens=40)], 1)
    with torch.inference_mode():
        expected = cpu.model(src, tgt[:, :-1])
        actual = gpu.model(src.cuda(), tgt[:, :-1].cuda()).cpu()
    torch.testing.assert_close(actual, expected, rtol=0, atol=1e-3)
    same = sum(a == b for a, b in zip(cpu.translate(sentences, num_beams=1), gpu.translate(sentences, num_beams=1)))
    assert same >= 0.95 * len(sentences), f"only {same} of {len(sentences)} greedy translations identical"


def test_bf16_autocast_inference_is_close_to_cpu_fp32(translators, sentences):
    cpu, gpu = translators
    src = batch_of(cpu, sentences)
    tgt = torch.cat([torch.full((len(src), 1), cpu.config.bos_id), generate(cpu.model, src, max_new_tokens=40)], 1)
    tgt_in, real = tgt[:, :-1], tgt[:, 1:] != cpu.config.pad_id  # (B, T), positions that hold a token
    with torch.inference_mode():
        expected = F.log_softmax(cpu.model(src, tgt_in), -1)  # (B, T, V)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = gpu.model(src.cuda(), tgt_in.cuda())
        actual = F.log_softmax(logits.float(), -1).cpu()
    top = expected.argmax(-1)  # (B, T)
    agreement = (actual.argmax(-1) == top)[real].float().mean().item()
    drift = (actual.gather(-1, top[..., None]) - expected.gather(-1, top[..., None])).abs()[..., 0][real].mean().item()
    assert agreement >= 0.95, f"top-1 agreement {agreement:.3f}"
    assert drift <= 0.1, f"mean |log p| difference {drift:.3f}"


@pytest.mark.parametrize("num_beams", [1, 4])
def test_cached_decoding_equals_uncached_on_the_gpu(translators, sentences, num_beams):
    _, gpu = translators
    src = batch_of(gpu, sentences[:16]).cuda()
    cached = generate(gpu.model, src, max_new_tokens=40, num_beams=num_beams, use_cache=True)
    uncached = generate(gpu.model, src, max_new_tokens=40, num_beams=num_beams, use_cache=False)
    assert torch.equal(cached, uncached)


def test_explain_gives_the_cpu_maps(translators, sentences):
    cpu, gpu = translators
    for text in sentences[:3]:
        expected, actual = explain(cpu, text, num_beams=1), explain(gpu, text, num_beams=1)
        assert actual.target_tokens == expected.target_tokens and actual.source_tokens == expected.source_tokens
        for kind in ("encoder", "decoder", "cross"):
            assert getattr(actual, kind).shape == getattr(expected, kind).shape
            torch.testing.assert_close(
                torch.from_numpy(getattr(actual, kind)), torch.from_numpy(getattr(expected, kind)), rtol=0, atol=1e-5
            )


def train_steps(device: str, bf16: bool, steps: int = 5) -> tuple[list[float], Transformer]:
    """A few AdamW steps of a tiny model on a fixed copy-task batch; the same start on every device."""
    config = TransformerConfig(
        vocab_size=64, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=32
    )
    torch.manual_seed(0)
    model = Transformer(config).to(device).train()
    gen = torch.Generator().manual_seed(1)
    body = torch.randint(4, config.vocab_size, (16, 10), generator=gen)
    src = torch.cat([body, torch.full((16, 1), config.eos_id)], 1).to(device)  # (B, S)
    tgt = torch.cat([torch.full((16, 1), config.bos_id), body, torch.full((16, 1), config.eos_id)], 1).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(steps):
        with torch.autocast(device_type="cuda" if device == "cuda" else "cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(src, tgt[:, :-1])  # (B, T, V)
        loss = F.cross_entropy(logits.float().flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=config.pad_id)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, model


def test_training_with_bf16_autocast_follows_fp32_on_the_cpu():
    expected, _ = train_steps("cpu", bf16=False)
    actual, model = train_steps("cuda", bf16=True)
    assert all(torch.isfinite(torch.tensor(actual)))
    assert actual[-1] < actual[0], actual  # it learns
    for step, (a, e) in enumerate(zip(actual, expected)):
        assert abs(a - e) <= 0.02 * e, f"step {step}: loss {a:.4f} on the GPU (bf16), {e:.4f} on the CPU (fp32)"
    assert all(p.dtype == torch.float32 for p in model.parameters())  # autocast keeps fp32 master weights


def test_a_checkpoint_loads_straight_onto_the_gpu(tiny_checkpoint):
    model = Transformer.from_pretrained(tiny_checkpoint, map_location="cuda")
    assert all(p.device.type == "cuda" for p in model.parameters())
    assert model.lm_head.weight is model.embed.weight  # the tie survives the move
