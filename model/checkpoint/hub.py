"""Finding checkpoint files in a local folder or a Hub repo, with errors that say what to do."""

from __future__ import annotations

import difflib
import os
import warnings
from pathlib import Path
from typing import Any

from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    HFValidationError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.file_download import REGEX_COMMIT_HASH
from huggingface_hub.utils import validate_repo_id

# The Hub repo the project publishes its checkpoint to; the demo loads it when MODEL_ID says so.
HUB_REPO_ID = "attention-lens/transformer-de-en"
# The Hub metadata of every checkpoint, declared once: the mixin writes it, the model card renders it.
HUB_METADATA: dict[str, Any] = dict(
    library_name="pytorch",
    pipeline_tag="translation",
    language=["de", "en"],
    license="mit",
    tags=["translation", "transformer", "attention-visualization", "multi30k"],
)
CHECKPOINT_FILES = ("config.json", "model.safetensors", "tokenizer.json", "README.md")
# One request, as long as the library waits for a file's metadata (HF_HUB_ETAG_TIMEOUT, 10 s by default),
# tells whether the Hub is reachable: no retries (5 of them, 23 s of waiting, before a refusal).
HUB_TIMEOUT_S = constants.HF_HUB_ETAG_TIMEOUT


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded: a missing, corrupt or mismatched file."""


def resolve_file(
    model_id: str | Path,
    filename: str,
    *,
    revision: str | None = None,
    cache_dir: str | Path | None = None,
    force_download: bool = False,
    token: str | bool | None = None,
    local_files_only: bool = False,
) -> Path:
    """Local path of `filename` in a checkpoint folder, or in Hub repo `model_id` at `revision`.

    A repo id is fetched through the Hugging Face cache: with HF_HUB_OFFLINE=1 a populated cache
    is enough, and an unreachable Hub is found out by one short request, not minutes of retries.
    """
    model_id = str(model_id)
    if os.path.isdir(model_id):
        path = Path(model_id) / filename
        if not path.is_file():
            raise CheckpointError(
                f"{filename} is missing from the checkpoint folder {model_id}: a checkpoint holds "
                f"{', '.join(CHECKPOINT_FILES)} (write one with Translator.save_pretrained or train.py)"
            )
        return path
    check_repo_id(model_id)
    where = dict(repo_id=model_id, filename=filename, revision=revision, cache_dir=cache_dir, token=token)
    offline = local_files_only or constants.is_offline_mode()
    immutable = revision is not None and REGEX_COMMIT_HASH.fullmatch(revision) is not None
    if offline or (immutable and not force_download):  # a commit's files never change: the cache first
        cached = _cached(where)
        if cached is not None:
            return cached
        if offline:
            return _not_cached(
                where,
                "HF_HUB_OFFLINE=1 (or local_files_only) forbids downloading it: "
                "unset it to download with network access",
            )
    unreachable = _hub_unreachable(where)
    if unreachable:
        cached = _cached(where)
        if cached is not None:
            warnings.warn(f"the Hub cannot be reached ({unreachable}): loading {model_id} from the local cache")
            return cached
        return _not_cached(
            where,
            f"the Hub at {constants.ENDPOINT} cannot be reached ({unreachable}): connect to "
            "the network; with HF_HUB_OFFLINE=1 only the cache is used, without trying",
        )
    return _download(where, force_download)


def check_repo_id(model_id: str) -> None:
    """Refuse a name that is meant as a folder (it does not exist) or is no Hub repo id (USER/NAME)."""
    parts = model_id.split("/")
    path_like = (
        model_id.startswith((".", "~", "/"))
        or os.path.isabs(model_id)
        or "\\" in model_id
        or len(parts) != 2
        or not all(parts)
        or os.path.isdir(parts[0])
    )
    suggestion = _did_you_mean(model_id)
    if path_like or suggestion:
        hint = f" (did you mean {suggestion}?)" if suggestion else ""
        raise CheckpointError(
            f"no such folder: {model_id}{hint}; a checkpoint is a folder holding {', '.join(CHECKPOINT_FILES)}, "
            "or a Hub repo id USER/NAME"
        )
    try:
        validate_repo_id(model_id)
    except HFValidationError as err:
        raise CheckpointError(
            f"{model_id} is neither an existing checkpoint folder nor a valid Hub repo id: {err}"
        ) from None


def _did_you_mean(name: str) -> str | None:
    """An existing folder whose path differs from `name` by a typo in one or more parts, if any."""
    path = Path(os.path.expanduser(name))
    folder = Path(path.anchor or ".")
    for part in path.parts[1:] if path.anchor else path.parts:
        if (folder / part).is_dir():
            folder = folder / part
            continue
        try:
            entries = [entry.name for entry in os.scandir(folder) if entry.is_dir()]
        except OSError:
            return None
        close = difflib.get_close_matches(part, entries, n=1, cutoff=0.8)
        if not close:
            return None
        folder = folder / close[0]
    return str(folder) if str(folder) != str(path) else None


def _cached(where: dict) -> Path | None:
    try:
        return Path(hf_hub_download(**where, local_files_only=True))
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):
        return None
    except Exception as err:  # a revision or repo the cache does not know: say so with the name
        raise _explain(err, where) from None


def _hub_unreachable(where: dict) -> str | None:
    """None when the Hub answers one request (no retries, a short timeout), else why not."""
    url = hf_hub_url(where["repo_id"], where["filename"], revision=where["revision"])
    try:
        get_hf_file_metadata(url, token=where["token"], timeout=HUB_TIMEOUT_S)
    except HfHubHTTPError:
        return None  # it answered (even "not found"): the download below reports exactly what
    except Exception as err:  # refused, no route, DNS, timeout: whatever the transport calls it
        return f"{type(err).__name__}: {err}"
    return None


def _download(where: dict, force_download: bool) -> Path:
    try:
        return Path(hf_hub_download(**where, force_download=force_download))
    except Exception as err:
        raise _explain(err, where) from None


def _not_cached(where: dict, why: str) -> Path:
    raise CheckpointError(
        f"{where['filename']} of the Hub repo {where['repo_id']} (revision {where['revision'] or 'main'}) is not in "
        f"the local Hugging Face cache, and {why}; or pass a local checkpoint folder"
    )


def _explain(err: Exception, where: dict) -> Exception:
    """The Hub's error as a CheckpointError that says which file of which repo, and what to do."""
    repo_id, filename, revision = where["repo_id"], where["filename"], where["revision"] or "main"
    if isinstance(err, RevisionNotFoundError):
        return CheckpointError(f"revision {revision!r} does not exist in the Hub repo {repo_id}")
    if isinstance(err, RepositoryNotFoundError):
        return CheckpointError(
            f"the Hub repo {repo_id} does not exist or is private (log in or set HF_TOKEN for a private repo)"
        )
    if isinstance(err, LocalEntryNotFoundError):
        return CheckpointError(
            f"{filename} of {repo_id} (revision {revision}) is not in the local Hugging Face cache and the Hub "
            "did not provide it: download it once with network access, or pass a local checkpoint folder "
            "(HF_HUB_OFFLINE=1 uses the cache alone, without trying the network)"
        )
    if isinstance(err, EntryNotFoundError):  # after LocalEntryNotFoundError, its subclass
        return CheckpointError(f"{filename} is missing from the Hub repo {repo_id} (revision {revision})")
    if isinstance(err, HFValidationError):
        return CheckpointError(f"{repo_id} is not a valid Hub repo id: {err}")
    if isinstance(err, (HfHubHTTPError, OSError)):
        return CheckpointError(f"could not download {filename} from the Hub repo {repo_id}: {err}")
    return err
