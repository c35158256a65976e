"""Where the tests find Multi30k: as the benchmarks do (data.find_corpus), $MULTI30K_DIR, else
../shared/data/multi30k beside the checkout."""

import os
from pathlib import Path

import pytest

import data

DATA_DIR = Path(os.environ.get(data.DATA_DIR_ENV) or data.SHARED_CORPUS)
HAS_CORPUS = (DATA_DIR / "train.de.gz").is_file() or (DATA_DIR / "train.de").is_file()
needs_corpus = pytest.mark.skipif(
    not HAS_CORPUS, reason=f"Multi30k not found in {DATA_DIR}: set MULTI30K_DIR to a folder with train/val/test files"
)
