"""What the page says the default model learned from (training_data/provenance.py): read from the data train.py records."""

import json

from training_data.provenance import CAPTIONS_ONLY, checkpoint_provenance, provenance


def test_captions_only_and_both_corpora_are_told_apart():
    assert provenance({"corpus": "Multi30k", "train_pairs": 29000}) is CAPTIONS_ONLY
    both = provenance(
        {
            "corpus": "Multi30k + Ding + games",
            "everyday": {"name": "Ding example sentences"},
            "more_corpora": {"games": 1, "software": 2},
        }
    )
    assert both.label == "trained on captions and everyday German" and "everyday German" in both.header
    assert len(both.header) <= len(CAPTIONS_ONLY.header) + 10  # a phone shows it above the first map


def test_a_checkpoint_without_readable_results_reads_as_captions_only(tmp_path):
    assert checkpoint_provenance(tmp_path) is CAPTIONS_ONLY  # no results.json
    (tmp_path / "results.json").write_text("{not json")
    assert checkpoint_provenance(tmp_path) is CAPTIONS_ONLY
    (tmp_path / "results.json").write_text(json.dumps({"data": {"everyday": {"repeat": 3}}}))
    assert checkpoint_provenance(tmp_path).label == "trained on captions and everyday German"
