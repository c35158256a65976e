"""What the page says the default model learned from (training_data/provenance.py): read from the data train.py
records, said in the page header by the catalogue's app.provenance.<kind>."""

import json

from training_data.provenance import CAPTIONS_ONLY, EVERYDAY, PAIRED, PAIRED_CHINESE, checkpoint_provenance, provenance
from ui.locales import LOCALES, message


def test_captions_only_and_both_corpora_are_told_apart():
    assert provenance({"corpus": "Multi30k", "train_pairs": 29000}) == CAPTIONS_ONLY
    both = provenance(
        {
            "corpus": "Multi30k + Ding + games",
            "everyday": {"name": "Ding example sentences"},
            "more_corpora": {"games": 1, "software": 2},
        }
    )
    assert both == EVERYDAY and "everyday German" in message(f"app.provenance.{both}")


def test_each_kind_is_one_short_sentence_in_every_locale():
    for locale in LOCALES:
        captions = message(f"app.provenance.{CAPTIONS_ONLY}", locale)
        for kind in (EVERYDAY, PAIRED, PAIRED_CHINESE):  # a phone shows it above the first map
            assert len(message(f"app.provenance.{kind}", locale)) <= len(captions) + 10, (kind, locale)


def test_a_checkpoint_without_readable_results_reads_as_captions_only(tmp_path):
    assert checkpoint_provenance(tmp_path) == CAPTIONS_ONLY  # no results.json
    (tmp_path / "results.json").write_text("{not json")
    assert checkpoint_provenance(tmp_path) == CAPTIONS_ONLY
    (tmp_path / "results.json").write_text(json.dumps({"data": {"everyday": {"repeat": 3}}}))
    assert checkpoint_provenance(tmp_path) == EVERYDAY
