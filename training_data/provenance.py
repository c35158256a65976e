"""What a checkpoint learned from, in the page's words, read from the `data` that train.py records in its
results.json: the page header says it, and the label over the default model's translation names it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from model.checkpoint.hub import CheckpointError, resolve_file

from .checked_json import optional, read_json

CAPTIONS = "29,000 captions of photos (Multi30k)"
RESULTS_FILE = "results.json"
MAX_RESULTS_BYTES = 1 << 20  # the shipped ones are 8 kB
MAX_RESULTS_DEPTH = 16  # the shipped ones nest 7


@dataclass(frozen=True)
class Provenance:
    header: str  # one short sentence for the page header (a phone shows it above the picture of the model)
    label: str  # a few words over the model's translation, after "The default model:"


CAPTIONS_ONLY = Provenance(
    f"Trained only on {CAPTIONS}: other German gets a rougher translation.", "trained on captions"
)


# The page's translator when it has both checkpoints (ui/pair.py): each sentence goes to the model that knows it.
PAIRED = Provenance(
    "Two models, for photo captions and for everyday German.", "each sentence by the model that knows it"
)


def provenance(data: dict | None) -> Provenance:
    """The words for a run's recorded `data`: captions only, or captions with the everyday corpora (the model card
    names each of them; the header stays one short sentence)."""
    if not isinstance((data or {}).get("everyday"), dict):
        return CAPTIONS_ONLY
    return Provenance(
        "Trained on 29,000 photo captions (Multi30k), then on everyday German too: captions come out best.",
        "trained on captions and everyday German",
    )


def checkpoint_provenance(model_id: str | Path, revision: str | None = None) -> Provenance:
    """The words for a checkpoint folder or Hub repo; captions only where its results.json is missing or unreadable
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
