"""model.safetensors: its header read and checked before anything is built, then loaded; and written.

A safetensors file opens with a JSON header that names every tensor with its dtype and shape, and
holds free-form string metadata. Reading it costs microseconds, so a config.json that asks for a
bigger model than the file holds is refused before anything is built, and every name, shape and
dtype is compared before a weight is read. The weights alone do not pin every size (n_heads splits
d_model without changing a shape), so the config a model was saved with is recorded in that
metadata, and a config.json that disagrees with it is refused.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from model.config import TransformerConfig

from .hub import CheckpointError
from .json_file import CheckpointFileError, parse

CONFIG_DEPTH = 2  # a config is one object; its tokenizer fingerprint a string in it

CONFIG_KEY = "attention_lens.config"  # the metadata entry holding the model's config as JSON
TOKENIZER_FIELD = "tokenizer"  # in that entry beside the config: the fingerprint of the model's tokenizer
FLOAT_DTYPES = {"F16": "float16", "BF16": "bfloat16", "F32": "float32"}  # snapshots are fp16
# Dropout changes how a model trains, not what its weights compute: a config.json may change it.
UNRECORDED_FIELDS = ("dropout",)
M = TypeVar("M", bound=nn.Module)  # the class load_checkpoint builds (model.Transformer)


class CheckpointWarning(UserWarning):
    """A checkpoint that loads but could not be checked fully (an older file without its config)."""


@dataclass
class WeightsHeader:
    """What model.safetensors says about itself, read without loading a tensor."""

    path: Path
    tensors: dict[str, tuple[str, tuple[int, ...]]]  # name -> (dtype, shape)
    config: dict | None  # the config recorded when it was saved; None in older files
    tokenizer: str | None = None  # the tokenizer's fingerprint (tokenizer.fingerprint); None in older files


def read_header(path: str | Path) -> WeightsHeader:
    """Names, dtypes and shapes of the tensors in `path`, and the config it records, if any."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path} does not exist")
    try:
        with safe_open(str(path), framework="pt") as file:
            metadata = file.metadata() or {}
            tensors = {}
            for name in file.keys():
                info = file.get_slice(name)
                tensors[name] = (info.get_dtype(), tuple(info.get_shape()))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(
            f"{path} is not a readable safetensors file ({err}); it may be truncated or corrupt: download or save it again"
        ) from None
    recorded = metadata.get(CONFIG_KEY)
    if recorded is not None:
        try:
            recorded = parse(recorded.encode("utf-8"), f"{path} (the config recorded in its header)", CONFIG_DEPTH)
        except CheckpointFileError as err:
            raise CheckpointError(f"{err}; save it again") from None
        if not isinstance(recorded, dict):
            raise CheckpointError(f"{path}: the config recorded in its header is not a JSON object; save it again")
    tokenizer = recorded.pop(TOKENIZER_FIELD, None) if isinstance(recorded, dict) else None
    return WeightsHeader(path, tensors, recorded, tokenizer if isinstance(tokenizer, str) else None)


def tied_groups(model: nn.Module) -> list[list[str]]:
    """The names of each saved tensor, tied names together (embed.weight, lm_head.weight)."""
    groups: dict[int, list[str]] = {}
    for name, tensor in model.state_dict(keep_vars=True).items():  # keep_vars: tied names share one object
        groups.setdefault(id(tensor), []).append(name)
    return list(groups.values())


def check_header(header: WeightsHeader, model: nn.Module, config_source: object) -> None:
    """Refuse a file whose tensor names, shapes or dtypes do not fit `model`."""
    path = header.path
    groups = tied_groups(model)
    shapes = {name: tuple(tensor.shape) for name, tensor in model.state_dict(keep_vars=True).items()}
    missing = [names[0] for names in groups if not any(name in header.tensors for name in names)]
    unexpected = sorted(set(header.tensors) - set(shapes))
    if missing or unexpected:
        raise CheckpointError(
            f"the weights in {path} do not fit the model {config_source} describes: "
            f"missing {_few(missing)}, unexpected {_few(unexpected)}"
        )
    for name, (dtype, shape) in header.tensors.items():
        if dtype not in FLOAT_DTYPES:
            raise CheckpointError(
                f"{path}: tensor {name} is {dtype}; weights must be {', '.join(FLOAT_DTYPES.values())}"
            )
        if shape != shapes[name]:
            raise CheckpointError(
                f"the weights in {path} do not fit the model {config_source} describes: tensor {name} has "
                f"shape {list(shape)} where that config asks for {list(shapes[name])}"
            )


def minimum_parameters(config: TransformerConfig) -> int:
    """A lower bound on the parameters `config` asks for: the tied embedding, and in each layer
    the attention projections (Q, K, V, output: 4 D^2) and the feed-forward (2 D d_ff)."""
    D, attention, ff = config.d_model, 4 * config.d_model**2, 2 * config.d_model * config.d_ff
    encoder, decoder = config.n_encoder_layers * (attention + ff), config.n_decoder_layers * (2 * attention + ff)
    return config.vocab_size * D + encoder + decoder


def check_size(header: WeightsHeader, config: TransformerConfig, config_source: object) -> None:
    """Refuse a config that asks for more parameters than the file holds, before anything is built
    (d_model=4096 on these weights would allocate gigabytes only to fail at the first tensor)."""
    stored = sum(math.prod(shape) for _, shape in header.tensors.values())
    needed = minimum_parameters(config)
    if needed > stored:
        raise CheckpointError(
            f"the weights in {header.path} do not fit the model {config_source} describes: it asks for at "
            f"least {needed:,} parameters, the file holds {stored:,}"
        )


def check_recorded_config(header: WeightsHeader, config: dict, config_source: object) -> bool:
    """True when the file records the config it was saved with and `config` agrees with it;
    False when it records none (an older file); refuses a disagreement."""
    if header.config is None:
        return False
    keys = sorted((set(config) | set(header.config)) - set(UNRECORDED_FIELDS))
    differ = [key for key in keys if config.get(key) != header.config.get(key)]
    if differ:
        facts = ", ".join(f"{key}={config.get(key)!r} (saved with {header.config.get(key)!r})" for key in differ)
        raise CheckpointError(
            f"{config_source} disagrees with the config {header.path} was saved with: {facts}; "
            "the weights only work with the config they were trained with: restore config.json"
        )
    return True


def read_finite_state(header: WeightsHeader, device: str | torch.device = "cpu") -> dict[str, Tensor]:
    """Every tensor of the file, refused if any holds NaN or an infinity."""
    state = load_file(str(header.path), device=str(device))
    for name, tensor in state.items():
        finite = torch.isfinite(tensor)
        if not bool(finite.all()):
            bad = tensor.numel() - int(finite.sum())
            raise CheckpointError(
                f"{header.path}: tensor {name} holds {bad:,} NaN or infinite value(s) of {tensor.numel():,}; "
                "the weights are damaged (did training diverge?): use an earlier checkpoint"
            )
    return state


def load_weights(model: nn.Module, path: str | Path, device: str | torch.device = "cpu") -> WeightsHeader:
    """Fill `model` from a safetensors file, after checking names, shapes, dtypes, the recorded
    config (when there is one) and that every value is finite. No pickle is ever read."""
    header = read_header(path)
    config = getattr(model, "config", None)
    source = "the model's config"
    check_header(header, model, source)
    if config is not None:
        check_recorded_config(header, config.to_dict(), source)
    state = read_finite_state(header, device)
    # Names were checked above; a tied pair is stored once, so strict loading would call the other missing.
    model.load_state_dict(state, strict=False)
    return header


def save_weights(model: nn.Module, path: str | Path, dtype: torch.dtype | None = None) -> Path:
    """Write model.safetensors atomically, the model's config recorded in its header; `dtype`
    (e.g. torch.float16 for snapshots) converts the floating-point tensors."""
    path = Path(path)
    state_dict = model.state_dict()
    state = {}
    for names in tied_groups(model):  # a tied pair is stored once, under its first name
        tensor = state_dict[names[0]].detach()
        if dtype is not None and tensor.is_floating_point():
            tensor = tensor.to(dtype)
        state[names[0]] = tensor.contiguous().cpu()
    # One metadata entry only: safetensors writes several in a random order, and the same model
    # should give the same bytes (the Hub then stores an unchanged file once).
    config = getattr(model, "config", None)
    # The tokenizer's fingerprint goes in the same entry, for the same reason.
    recorded = config.to_dict() if config is not None else None
    if recorded is not None and getattr(model, "tokenizer_fingerprint", None):
        recorded[TOKENIZER_FIELD] = model.tokenizer_fingerprint
    metadata = {CONFIG_KEY: json.dumps(recorded, sort_keys=True)} if recorded is not None else None
    partial = path.with_name(path.name + ".partial")
    try:
        save_file(state, str(partial), metadata=metadata)
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(partial, 0o666 & ~umask)  # safetensors writes 0600; a checkpoint is read by others (a server)
        os.replace(partial, path)  # a reader sees the old file or the new one, never half of one
    finally:
        partial.unlink(missing_ok=True)  # left only when writing failed (a full disk)
    return path


def load_checkpoint(cls: type[M], config: TransformerConfig, config_path: Path, weights_path: Path) -> M:
    """Build `cls(config)` and fill it from `weights_path`, once the file's header fits the config."""
    header = read_header(weights_path)
    check_size(header, config, config_path)  # a config far bigger than the file is refused before anything is built
    # Shapes do not pin everything (n_heads splits d_model; norm_first moves no tensor): the record does.
    if not check_recorded_config(header, config.to_dict(), config_path):
        warnings.warn(
            f"{weights_path} does not record the config it was saved with (it predates that record), so "
            f"{config_path} is trusted as it is; save the checkpoint again to record it",
            CheckpointWarning,
        )
    model = cls(config)
    check_header(header, model, config_path)
    model.load_state_dict(read_finite_state(header), strict=False)  # names checked; a tied pair is stored once
    # Translator checks its tokenizer against it. (torch's stub lets a module's attribute hold tensors and modules only.)
    model.tokenizer_fingerprint = header.tokenizer  # type: ignore[assignment]
    return model


def write_config(config: TransformerConfig, path: Path) -> None:
    """config.json, written atomically."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(config.to_dict(), sort_keys=True, indent=2), encoding="utf-8")
    os.replace(partial, path)


def _few(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit]) or "none"
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
