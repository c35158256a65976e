"""The saved training state (model, optimizer, progress, RNG of every rank, the run's fingerprint)
and the weight files of a run: rotation checkpoints, the best one, their average.

Safetensors only: tensors in the file, everything else as JSON in its metadata. Nothing is unpickled.
"""

from __future__ import annotations

import json
import random
import sys
import warnings
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file, save_model

from model import Transformer
from model.checkpoint.files import atomic_path

from .run import RunState


class StateError(RuntimeError):
    """A training state or weight file that cannot be used; the message names the file."""


# ----- random number generators ------------------------------------------------------------------


def rng_state() -> dict:
    """This process's generators: torch's as a tensor, Python's as JSON."""
    version, internal, gauss = random.getstate()
    return {"torch": torch.get_rng_state(), "python": [version, list(internal), gauss]}


def restore_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))


# ----- the training state ------------------------------------------------------------------------


def save_state(
    path: Path, model: Transformer, optimizer: torch.optim.Optimizer, progress: RunState, run_id: dict, rngs: list[dict]
) -> None:
    """Everything a resume needs in one safetensors file, replaced atomically. `rngs[r]` is rank r's."""
    tensors = {f"model.{k}": v.detach().cpu().clone().contiguous() for k, v in model.state_dict().items()}
    opt = optimizer.state_dict()
    for index, param_state in opt["state"].items():
        for key, value in param_state.items():
            tensors[f"optim.{index}.{key}"] = torch.as_tensor(value).detach().cpu().clone().contiguous()
    for rank, rng in enumerate(rngs):
        tensors[f"rng.torch.{rank}"] = rng["torch"]
    meta = {
        "run": run_id,
        "progress": progress.to_dict(),
        "param_groups": opt["param_groups"],
        "python_random": [rng["python"] for rng in rngs],
    }
    with atomic_path(Path(path)) as tmp:
        save_file(tensors, str(tmp), metadata={"state": json.dumps(meta)})


def read_state_meta(path: Path) -> dict:
    """The JSON part of a state file, without reading its tensors."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return json.loads(f.metadata()["state"])
    except (SafetensorError, OSError, KeyError, TypeError, json.JSONDecodeError) as err:
        raise StateError(f"cannot read the training state {path} ({err}); delete it to start over") from None


def load_state(path: Path, model: Transformer, optimizer: torch.optim.Optimizer, rank: int) -> RunState:
    """Restore what save_state wrote, after checking every part of it (errors name the file)."""
    meta = read_state_meta(path)
    try:
        tensors = load_file(str(path))
        progress = RunState.from_dict(meta.get("progress", {}), path)
    except (SafetensorError, OSError, ValueError) as err:
        raise StateError(f"the training state {path} is damaged ({err}); delete it to start over") from None
    if not isinstance(meta.get("param_groups"), list):
        raise StateError(
            f"the training state {path} records no optimizer settings (param_groups); delete it to start over"
        )
    weights = {k[len("model.") :]: v for k, v in tensors.items() if k.startswith("model.")}
    _check_weights(path, model, weights)
    opt_state = _optimizer_state(path, tensors, model, progress.step)
    model.load_state_dict(weights, strict=True)
    optimizer.load_state_dict({"state": opt_state, "param_groups": meta["param_groups"]})
    rng_key = f"rng.torch.{rank}" if f"rng.torch.{rank}" in tensors else "rng.torch"  # older states: one RNG
    if rng_key not in tensors:
        raise StateError(f"the training state {path} has no random number generator state for rank {rank}")
    python_states = meta.get("python_random")
    if isinstance(python_states, list) and len(python_states) > rank:
        restore_rng({"torch": tensors[rng_key], "python": python_states[rank]})
    else:
        torch.set_rng_state(tensors[rng_key])
        print(f"{path}: no Python RNG state recorded for rank {rank}; only torch's was restored", file=sys.stderr)
    return progress


def _check_weights(path: Path, model: Transformer, weights: dict[str, torch.Tensor]) -> None:
    expected = model.state_dict()
    missing, unexpected = sorted(set(expected) - set(weights)), sorted(set(weights) - set(expected))
    if missing or unexpected:
        raise StateError(
            f"the training state {path} does not fit the model: missing {missing}, unexpected {unexpected}"
        )
    for name, value in weights.items():
        if value.shape != expected[name].shape:
            raise StateError(
                f"the training state {path}: {name} has shape {tuple(value.shape)}, "
                f"the model needs {tuple(expected[name].shape)}"
            )
        if value.is_floating_point() and not torch.isfinite(value).all():
            raise StateError(
                f"the training state {path}: weight {name} holds NaN or infinite values; "
                "the run diverged before this save: delete the state (or the work dir) to start over"
            )


def _optimizer_state(path: Path, tensors: dict, model: Transformer, step: int) -> dict:
    """Adam's per-parameter tensors; after step 0 every parameter must have all three."""
    opt_state: dict = {}
    for name, value in tensors.items():
        if name.startswith("optim."):
            _, index, key = name.split(".", 2)
            opt_state.setdefault(int(index), {})[key] = value
    n_params = len(list(model.parameters()))
    if step > 0:
        for index in range(n_params):
            have = set(opt_state.get(index, {}))
            if not {"step", "exp_avg", "exp_avg_sq"} <= have:
                raise StateError(
                    f"the training state {path} lacks optimizer tensors of parameter {index} "
                    f"(has {sorted(have) or 'none'}, needs exp_avg, exp_avg_sq, step); delete it to start over"
                )
    for index, values in opt_state.items():
        if not 0 <= index < n_params:
            raise StateError(
                f"the training state {path} has optimizer tensors for parameter {index}, but the model has {n_params}"
            )
        for key, value in values.items():
            if value.is_floating_point() and not torch.isfinite(value).all():
                raise StateError(
                    f"the training state {path}: optimizer tensor {index}.{key} holds NaN or infinite values"
                )
    return opt_state


# ----- weight files: rotation checkpoints, best, average ----------------------------------------


def save_training_weights(model: Transformer, path: Path) -> None:
    with atomic_path(Path(path)) as tmp:
        save_model(model, str(tmp))


def read_weights(model: Transformer, path: Path) -> dict[str, torch.Tensor] | None:
    """A full state dict for `model` from a weight file, or None (with a warning) when it is damaged."""
    try:
        weights = load_file(str(path))
        full = _complete(model, weights)
    except (SafetensorError, OSError, StateError) as err:
        warnings.warn(f"skipping the damaged checkpoint {path}: {err}", stacklevel=2)
        return None
    bad = [k for k, v in full.items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if bad:
        warnings.warn(f"skipping the checkpoint {path}: {bad[0]} holds NaN or infinite values", stacklevel=2)
        return None
    return full


def _complete(model: Transformer, weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """save_model drops the tied lm_head (shared with embed); put the shared tensors back, then check."""
    expected = model.state_dict()
    full = dict(weights)
    if "lm_head.weight" not in full and "embed.weight" in full:
        full["lm_head.weight"] = full["embed.weight"]
    if "embed.weight" not in full and "lm_head.weight" in full:
        full["embed.weight"] = full["lm_head.weight"]
    missing, unexpected = sorted(set(expected) - set(full)), sorted(set(full) - set(expected))
    if missing or unexpected:
        raise StateError(f"weights do not fit the model: missing {missing}, unexpected {unexpected}")
    for name, value in full.items():
        if value.shape != expected[name].shape:
            raise StateError(f"{name} has shape {tuple(value.shape)}, the model needs {tuple(expected[name].shape)}")
    return full


def average_checkpoints(model: Transformer, paths: list[Path]) -> dict[str, torch.Tensor] | None:
    """Element-wise mean of the readable checkpoints among `paths` (None if fewer than two are)."""
    readable = [w for w in (read_weights(model, p) for p in paths) if w is not None]
    if len(readable) < 2:
        return None
    total = {k: v.double() for k, v in readable[0].items()}
    for weights in readable[1:]:
        for k, v in weights.items():
            total[k] += v.double()
    return {k: (v / len(readable)).to(readable[0][k].dtype) for k, v in total.items()}
