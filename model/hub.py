"""Finding checkpoint files in a local folder or a Hub repo, with errors that say what to do."""

from __future__ import annotations

import os
from pathlib import Path

from huggingface_hub import hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    HFValidationError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

# The Hub repo the project publishes its checkpoint to; the demo loads it when MODEL_ID says so.
HUB_REPO_ID = "attention-lens/transformer-de-en"
# The Hub metadata of every checkpoint, declared once: the mixin writes it, the model card renders it.
HUB_METADATA = dict(
    library_name="pytorch",
    pipeline_tag="translation",
    language=["de", "en"],
    license="mit",
    tags=["translation", "transformer", "attention-visualization", "multi30k"],
)
CHECKPOINT_FILES = ("config.json", "model.safetensors", "tokenizer.json", "README.md")


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

    A repo id is fetched through the Hugging Face cache, so with HF_HUB_OFFLINE=1 a populated
    cache is enough.
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
    looks_like_path = model_id.startswith((".", "/", "~")) or model_id.count("/") != 1
    if looks_like_path:
        raise CheckpointError(f"{model_id} is neither an existing checkpoint folder nor a Hub repo id (USER/NAME)")
    try:
        return Path(
            hf_hub_download(
                repo_id=model_id,
                filename=filename,
                revision=revision,
                cache_dir=cache_dir,
                force_download=force_download,
                token=token,
                local_files_only=local_files_only,
            )
        )
    except RevisionNotFoundError:
        raise CheckpointError(f"revision {revision!r} does not exist in the Hub repo {model_id}") from None
    except RepositoryNotFoundError:
        raise CheckpointError(
            f"the Hub repo {model_id} does not exist or is private (log in or set HF_TOKEN for a private repo)"
        ) from None
    except LocalEntryNotFoundError:
        raise CheckpointError(
            f"{filename} of {model_id} (revision {revision or 'main'}) is not in the local Hugging Face cache and "
            "the Hub cannot be reached (offline mode or no network): download it once with network access, "
            "or pass a local checkpoint folder"
        ) from None
    except EntryNotFoundError:  # after LocalEntryNotFoundError, its subclass
        raise CheckpointError(f"{filename} is missing from the Hub repo {model_id} (revision {revision or 'main'})") from None
    except HFValidationError as err:
        raise CheckpointError(f"{model_id} is not a valid Hub repo id: {err}") from None
    except HfHubHTTPError as err:
        raise CheckpointError(f"could not download {filename} from the Hub repo {model_id}: {err}") from None
