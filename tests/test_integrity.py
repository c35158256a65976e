"""Nothing loads wrong: tampered copies of real checkpoints are refused fast, naming the file.

Each case copies a checkpoint (the tiny test one, or the shipped one) to a temp folder, damages
one thing, and loads it through the public entry points. The absurd configs are refused within
MAX_SECONDS and MAX_EXTRA_MB of peak memory (VmHWM, reset through /proc/self/clear_refs): the
checks read the safetensors header, not the weights, before anything is built.
"""

import json
import os
import re
import shutil
import time
import warnings
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from model import CheckpointError, ConfigError, Transformer, TransformerConfig
from model.checkpoint.weights import (
    CONFIG_KEY,
    CheckpointWarning,
    load_weights,
    save_weights,
)
from tokenizer import fingerprint
from translation import Translator

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints" / "de-en"
MAX_SECONDS = 2.0
MAX_EXTRA_MB = 500
STATUS = Path("/proc/self/status")


def copy_checkpoint(source: Path, folder: Path) -> Path:
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("*.png", "*.jsonl", "*.txt"))
    return folder


def edit_config(folder: Path, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def rewrite_weights(folder: Path, edit=lambda state: None, keep_record: bool = True) -> Path:
    """Rewrite model.safetensors after `edit(state)`, with or without the recorded config."""
    path = folder / "model.safetensors"
    with safe_open(str(path), framework="pt") as file:
        metadata = file.metadata() if keep_record else None
    state = load_file(str(path))
    edit(state)
    save_file(state, str(path), metadata=metadata)
    return path


def a_matrix(state: dict) -> str:
    """The name of some weight matrix other than the embedding (whatever the layers call it)."""
    return sorted(name for name, tensor in state.items() if tensor.dim() == 2 and name != "embed.weight")[-1]


def rss_kb(field: str) -> int:
    return int(re.search(rf"{field}:\s+(\d+) kB", STATUS.read_text()).group(1))


def refused_quickly(load, match: str, names: list[Path]) -> str:
    """Run `load`, which must raise; assert time, peak memory and that the message names each file."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak resident set, to now
    except OSError:
        pytest.skip("cannot reset the peak RSS here (/proc/self/clear_refs): the memory bound is unmeasurable")
    before, start = rss_kb("VmRSS"), time.perf_counter()
    with pytest.raises((CheckpointError, ConfigError)) as caught:
        load()
    seconds, extra_mb = time.perf_counter() - start, (rss_kb("VmHWM") - before) / 1024
    message = str(caught.value)
    assert re.search(match, message), message
    for name in names:
        assert str(name) in message, f"{name} not named in: {message}"
    assert seconds < MAX_SECONDS, f"refused after {seconds:.2f} s"
    assert extra_mb < MAX_EXTRA_MB, f"refusing took {extra_mb:.0f} MB"
    return message


# ----- 1. absurd config values are refused before anything is allocated -----------------------


@pytest.mark.parametrize(
    "change, match, blame",
    [
        (
            {"d_model": 4096},
            r"do not fit.*asks for at least [0-9,]+ parameters, the file holds 7,",
            ["model.safetensors", "config.json"],
        ),
        ({"max_len": 2_000_000}, r"max_len must be at most 16,384", ["config.json"]),
        ({"n_heads": 256}, r"n_heads must be at most 64", ["config.json"]),
        ({"vocab_size": 10**9}, r"vocab_size must be at most", ["config.json"]),
        ({"n_encoder_layers": 10_000}, r"n_encoder_layers must be at most", ["config.json"]),
    ],
)
def test_absurd_config_on_the_shipped_weights_is_refused_fast(tmp_path, change, match, blame):
    folder = copy_checkpoint(SHIPPED, tmp_path / "de-en")
    edit_config(folder, **change)
    refused_quickly(lambda: Translator.from_pretrained(folder, device="cpu"), match, [folder / name for name in blame])


def test_a_wider_model_is_refused_by_the_header_even_without_a_recorded_config(tiny_checkpoint, tmp_path):
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    rewrite_weights(folder, keep_record=False)
    edit_config(folder, d_model=4096, d_ff=16_384)
    refused_quickly(
        lambda: Transformer.from_pretrained(folder),
        r"do not fit.*asks for at least",
        [folder / "model.safetensors", folder / "config.json"],
    )


# ----- 2. mismatches that used to load silently ---------------------------------------------


def test_heads_the_weights_were_not_trained_with_are_refused(tmp_path):
    # n_heads=8 keeps every shape of the shipped weights: only the recorded config tells.
    folder = copy_checkpoint(SHIPPED, tmp_path / "de-en")
    edit_config(folder, n_heads=8)
    refused_quickly(
        lambda: Translator.from_pretrained(folder, device="cpu"),
        r"disagrees.*n_heads=8 \(saved with 4\)",
        [folder / "config.json", folder / "model.safetensors"],
    )


def test_older_weights_without_a_record_load_with_a_warning(tiny_checkpoint, tmp_path):
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    rewrite_weights(folder, keep_record=False)
    with pytest.warns(CheckpointWarning, match=re.escape(str(folder / "model.safetensors"))):
        old = Translator.from_pretrained(folder, device="cpu")
    new = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]])
    assert torch.equal(old.model(src, tgt), new.model(src, tgt))


def test_a_foreign_tokenizer_is_refused(tiny_checkpoint, tmp_path):
    from tokenizer import train_tokenizer

    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    foreign = train_tokenizer(["Der Hund läuft schnell.", "The dog runs fast."] * 50, vocab_size=300)
    foreign.save(str(folder / "tokenizer.json"))
    refused_quickly(
        lambda: Translator.from_pretrained(folder, device="cpu"),
        r"has \d+ tokens where .*vocab_size=",
        [folder / "tokenizer.json"],
    )


def test_a_tokenizer_with_other_special_ids_is_refused(tiny_checkpoint, tmp_path):
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    data = json.loads((folder / "tokenizer.json").read_text())
    swap = {"<s>": "</s>", "</s>": "<s>"}
    data["model"]["vocab"] = {swap.get(token, token): i for token, i in data["model"]["vocab"].items()}
    for added in data["added_tokens"]:
        added["content"] = swap.get(added["content"], added["content"])
    (folder / "tokenizer.json").write_text(json.dumps(data))
    refused_quickly(
        lambda: Translator.from_pretrained(folder, device="cpu"),
        r"special token <s> has id 2",
        [folder / "tokenizer.json"],
    )
    # The ids are checked against the model's config, not only against the usual 0, 1, 2.
    tokenizer = Translator.from_pretrained(tiny_checkpoint, device="cpu").tokenizer
    config = TransformerConfig(vocab_size=tokenizer.get_vocab_size(), d_model=32, n_heads=4, bos_id=3)
    with pytest.raises(CheckpointError, match="<s> has id 1 where the model's config says 3"):
        Translator(Transformer(config), tokenizer)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_nan_or_infinite_weights_are_refused(tiny_checkpoint, tmp_path, dtype):
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    poisoned = []

    def poison(state):
        name = a_matrix(state)
        state[name] = state[name].to(dtype)
        state[name][0, :3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
        poisoned.append(name)

    path = rewrite_weights(folder, poison)
    refused_quickly(
        lambda: Translator.from_pretrained(folder, device="cpu"),
        rf"{re.escape(poisoned[0])} holds 3 NaN or infinite",
        [path],
    )
    model = Transformer(Transformer.from_pretrained(tiny_checkpoint).config)
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        load_weights(model, path)  # the function training uses checks as much


def test_a_missing_tensor_is_refused(tiny_checkpoint, tmp_path):
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    removed = []
    path = rewrite_weights(folder, lambda state: removed.append((a_matrix(state), state.pop(a_matrix(state)))))
    refused_quickly(lambda: Transformer.from_pretrained(folder), rf"missing {re.escape(removed[0][0])}", [path])


@pytest.mark.parametrize("dtype", [torch.int64, torch.float64, torch.int8])
def test_a_tensor_of_a_wrong_dtype_is_refused(tiny_checkpoint, tmp_path, dtype):
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")

    def retype(state):
        state["embed.weight"] = state["embed.weight"].to(dtype)

    path = rewrite_weights(folder, retype)
    refused_quickly(
        lambda: Transformer.from_pretrained(folder), r"embed.weight is [A-Z0-9]+; weights must be float16", [path]
    )


def test_a_tensor_of_a_wrong_shape_is_refused(tiny_checkpoint, tmp_path):
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    changed = []

    def transpose(state):
        name = next(name for name in sorted(state) if state[name].dim() == 2 and len(set(state[name].shape)) == 2)
        state[name] = state[name].T.contiguous()
        changed.append((name, list(state[name].shape)))

    path = rewrite_weights(folder, transpose)
    name, shape = changed[0]
    refused_quickly(
        lambda: Transformer.from_pretrained(folder),
        rf"{re.escape(name)} has shape {re.escape(str(shape))}",
        [path, folder / "config.json"],
    )


# ----- what is written, and what loads ---------------------------------------------------------


def test_saving_records_the_config_in_the_weights(tiny_checkpoint, tmp_path):
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    translator.save_pretrained(tmp_path / "again")
    with safe_open(str(tmp_path / "again" / "model.safetensors"), framework="pt") as file:
        recorded = json.loads(file.metadata()[CONFIG_KEY])
    assert recorded.pop("tokenizer") == fingerprint(translator.tokenizer)  # beside the config, in one entry
    assert recorded == translator.config.to_dict()
    assert json.loads((tmp_path / "again" / "config.json").read_text()) == recorded


def foreign_tokenizer(tokenizer):
    """The same size and special ids, other tokens: two ordinary tokens' ids swapped."""
    from tokenizers import Tokenizer

    spec = json.loads(tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    a, b = [token for token, i in vocab.items() if i in (100, 101)]
    vocab[a], vocab[b] = vocab[b], vocab[a]
    return Tokenizer.from_str(json.dumps(spec))


def test_a_foreign_tokenizer_of_the_same_size_and_special_ids_is_refused(tiny_checkpoint, tmp_path):
    import shutil

    folder = tmp_path / "swapped"
    shutil.copytree(tiny_checkpoint, folder)
    original = Translator.from_pretrained(folder, device="cpu")
    original.save_pretrained(folder)  # records the tokenizer's fingerprint
    other = foreign_tokenizer(original.tokenizer)
    assert other.get_vocab_size() == original.tokenizer.get_vocab_size()
    other.save(str(folder / "tokenizer.json"))
    refused_quickly(
        lambda: Translator.from_pretrained(folder, device="cpu"),
        r"is not the tokenizer these weights were trained with",
        [folder / "tokenizer.json"],
    )
    with pytest.raises(CheckpointError, match="comes from another checkpoint"):
        Translator(original.model, other, device="cpu")  # in code too, not only from files


# fp32: the values load exactly (checked below), but Translator stores the decoder's matrices
# transposed on a CPU (Transformer.store_decoder_transposed), so products may round differently.
@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.float16, 2e-2), (torch.bfloat16, 1e-1)])
def test_half_precision_weights_load_into_the_fp32_model(tiny_checkpoint, tmp_path, dtype, tolerance):
    reference = Transformer.from_pretrained(tiny_checkpoint)
    folder = copy_checkpoint(tiny_checkpoint, tmp_path / "ckpt")
    save_weights(reference, folder / "model.safetensors", dtype=dtype)  # snapshots are written in fp16
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the record is there: no warning
        loaded = Translator.from_pretrained(folder, device="cpu").model
    for name, param in loaded.state_dict().items():
        assert param.dtype == torch.float32
        assert torch.equal(param, reference.state_dict()[name].to(dtype).float()), name  # exactly the rounded values
    src, tgt = torch.tensor([[5, 6, 7, 8, 2]]), torch.tensor([[1, 9, 10]])
    torch.testing.assert_close(loaded(src, tgt), reference(src, tgt), rtol=tolerance, atol=tolerance)


def test_the_shipped_checkpoint_records_its_config_and_tokenizer_and_loads_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        translator = Translator.from_pretrained(SHIPPED, device="cpu")
    with safe_open(str(SHIPPED / "model.safetensors"), framework="pt") as file:
        recorded = json.loads(file.metadata()[CONFIG_KEY])
    assert recorded.pop("tokenizer") == fingerprint(translator.tokenizer)
    assert recorded == translator.config.to_dict()


@pytest.mark.parametrize(
    "write, why",
    [
        (
            lambda path: path.write_bytes("Modellkarte für ein Übersetzungsmodell".encode("latin-1")),
            "is not UTF-8 text",
        ),
        (lambda path: os.truncate(path, 1 << 30), "is larger than 1 MB"),  # a sparse 1 GiB file: never read in full
    ],
)
def test_a_model_card_too_large_or_not_utf8_is_left_out_with_a_warning(tiny_checkpoint, tmp_path, write, why):
    import shutil

    folder = tmp_path / "card"
    shutil.copytree(tiny_checkpoint, folder)
    write(folder / "README.md")
    start = time.perf_counter()
    with pytest.warns(CheckpointWarning, match=why):
        translator = Translator.from_pretrained(folder, device="cpu")
    assert translator.model_card is None and time.perf_counter() - start < 10
