"""recipes/everyday/route.py: the page's translator measured as it runs (each sentence by its route's model, read as
the route reads it), and the set that the not-German check is measured on."""

import importlib.util
from pathlib import Path

from translation import Translator
from ui.routed import Router

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS, EVERYDAY = ROOT / "checkpoints" / "de-en", ROOT / "checkpoints" / "de-en-everyday"
spec = importlib.util.spec_from_file_location("route", ROOT / "recipes" / "everyday" / "route.py")
route = importlib.util.module_from_spec(spec)
spec.loader.exec_module(route)


class Corpus:
    def __init__(self, src, tgt):
        self.src, self.tgt = src, tgt


def test_each_sentence_is_scored_as_its_route_translates_it_and_translated_once():
    models = {
        "default": Translator.from_pretrained(CAPTIONS, device="cpu"),
        "everyday": Translator.from_pretrained(EVERYDAY, device="cpu"),
    }
    cache = route.Cached(models)
    router = Router.of_checkpoint(CAPTIONS)
    sources = ["ich möchte ein bier.", "Ein Mann fährt Fahrrad."]
    out, share = cache.routed(router, sources)
    assert share == 0.5 and out[0] == models["everyday"].translate("Ich möchte ein Bier.", num_beams=4)
    assert ("everyday", "Ich möchte ein Bier.") in cache.done and ("everyday", "ich möchte ein bier.") not in cache.done
    before = dict(cache.done)
    cache.routed(router, sources)
    assert cache.done == before  # asked again: nothing translated again
    report = route.translation_report(
        cache, router, {"tiny": Corpus(sources, ["I want a beer.", "A man rides a bike."])}
    )
    assert set(report) == {"tiny cased", "tiny lowercased"}
    lowered = report["tiny lowercased"]
    assert lowered["pair"]["chrf"] > lowered["pair_without_recasing"]["chrf"]  # "ein mann fährt fahrrad." recased


def test_the_not_german_set_is_built_from_the_docs_and_the_written_sentences():
    english = route.english_of_docs()
    assert len(english) > 300 and not any("`" in s or "„" in s for s in english)
    report = route.language_report(
        Router.of_checkpoint(CAPTIONS),
        {"tiny": Corpus(["Wo ist der Bahnhof?", "Ein Hund rennt."], ["Where is it?", "A dog runs."])},
    )
    assert report["german_called_not_german"] == 0 and report["not_german"]["chinese and japanese"] == "60/60"
    assert report["precision"] == 1.0 and report["recall"] > 0.99
