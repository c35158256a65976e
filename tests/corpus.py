"""Where the tests find Multi30k: $MULTI30K_DIR, else ../shared/data/multi30k beside the checkout."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("MULTI30K_DIR") or ROOT.parent / "shared" / "data" / "multi30k")
HAS_CORPUS = (DATA_DIR / "train.de.gz").is_file() or (DATA_DIR / "train.de").is_file()
needs_corpus = pytest.mark.skipif(
    not HAS_CORPUS, reason=f"Multi30k not found in {DATA_DIR}: set MULTI30K_DIR to a folder with train/val/test files"
)
