"""What a checkpoint learned from, read from the `data` that train.py records in its results.json: the page
header says it in the visitor's language."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from model.checkpoint.hub import CheckpointError, resolve_file

from .checked_json import optional, read_json

Provenance = Literal["captions", "everyday", "paired", "paired_chinese"]

RESULTS_FILE = "results.json"
MAX_RESULTS_BYTES = 1 << 20  # the shipped ones are 8 kB
MAX_RESULTS_DEPTH = 16  # the shipped ones nest 7

# What a checkpoint learned from, as the key of the page header's sentence (app.provenance.<kind> in
# ui/static/messages/<locale>.json): photo captions only, captions then everyday German, or (ui/pair.py) the page's
# two models, each sentence by the one that knows it.
CAPTIONS_ONLY: Provenance = "captions"
EVERYDAY: Provenance = "everyday"
PAIRED: Provenance = "paired"
PAIRED_CHINESE: Provenance = "paired_chinese"  # the two German models and the Chinese one


def provenance(data: dict | None) -> Provenance:
    """What a run's recorded `data` says: captions only, or captions with the everyday corpora (the model card
    names each of them)."""
    return EVERYDAY if isinstance((data or {}).get("everyday"), dict) else CAPTIONS_ONLY


def checkpoint_provenance(model_id: str | Path, revision: str | None = None) -> Provenance:
    """What a checkpoint folder or Hub repo learned from; captions only where its results.json is missing or unreadable
    (a checkpoint saved outside train.py records no data)."""
    try:
        path = resolve_file(model_id, RESULTS_FILE, revision=revision)
    except (CheckpointError, OSError):
        return CAPTIONS_ONLY
    results = optional(
        lambda: read_json(path, MAX_RESULTS_BYTES, MAX_RESULTS_DEPTH),
        "the page says the model learned from captions only",
    )
    if results is None:
        return CAPTIONS_ONLY
    return provenance(results.get("data") if isinstance(results, dict) else None)
