"""Three checkpoints and a router: each sentence goes to the model that reads its language and its kind of German.

The default model (checkpoints/de-en: captions first, some everyday German) translates photo captions best,
the everyday model (checkpoints/de-en-everyday) everyday speech. Before anything is translated, each sentence is
made ready and routed (`Router.route`):
1. German typed without umlauts or ß gets them back ("mochte" -> "möchte": training_data/umlauts.py), German written
   all in lowercase or all in capitals gets its capitals back (training_data/truecase.py), and the full-width
   sentence marks of Chinese and Japanese ("。", "！", "？") become ".", "!", "?";
2. Chinese (Han characters, Simplified or Traditional, and no kana or Hangul: tokenizer/chinese.reads_chinese) reads
   like "Chinese" and goes to the Chinese model (checkpoints/zh-en) in Simplified characters with Chinese punctuation;
   other text that does not look like German (training_data/language.py: no letters, another script such as Japanese
   or Korean, English) reads like "not German": the default model still translates it, and the page says so;
3. the default checkpoint's domain guess (training_data/domain.py, domain.json.gz) tells captions from everyday German.
A caller may force either model. recipes/everyday/route.py measures the pair on the dev sets (docs/everyday.md,
"Routing").

    from ui.routed import RoutedTranslator
    both = RoutedTranslator.from_pretrained("checkpoints/de-en", "checkpoints/de-en-everyday")
    both.translate(["Ein Hund rennt über die Wiese.", "wo ist der bahnhof?"])
    both.router.route("Wo ist der Bahnhof?").model  # "everyday"
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from model import CheckpointError
from tokenizer.chinese import normalise_chinese, reads_chinese, to_simplified
from tokenizer.sentences import split_sentences
from training_data.domain import DOMAIN_FILE, DomainGuess, checked_domain, guess_from
from training_data.language import LanguageCheck, load_language
from training_data.truecase import Truecaser, word_changes
from training_data.umlauts import Umlauts
from translation import Translator

MODELS = ("default", "everyday", "zh-en")  # the checkpoints, as the API and the page name them
CHOICES = ("auto", *MODELS)  # what a caller may ask for: the router's choice, or one model
READS_LIKE = ("captions", "everyday", "Chinese", "not German")
FULL_WIDTH_MARKS = str.maketrans({"。": ".", "！": "!", "？": "?", "．": "."})


@dataclass(frozen=True)
class Route:
    """Where one sentence goes, and why."""

    text: str  # the sentence as the model reads it (recased, full-width marks made plain)
    model: str  # "default", "everyday" or "zh-en"
    reads_like: str  # "captions", "everyday", "Chinese" or "not German"
    forced: bool = False  # the caller chose the model
    words: list[str] = field(default_factory=list)  # the words that said so ("Bahnhof", "wo"; "the", "is")
    recased: list[tuple[str, str]] = field(default_factory=list)  # (as written, as read) per word changed (Chinese:
    # per Traditional character read as Simplified)
    why: str = ""  # for "not German": "no letters", "script" or "english"
    written: str = ""  # the sentence as the visitor wrote it

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "reads_like": self.reads_like,
            "forced": self.forced,
            "words": list(self.words),
            "recased": [list(pair) for pair in self.recased],
            "why": self.why,
            "written": self.written,
        }


def checked_choice(model) -> str:
    """The `model` argument: "auto" (the router's choice), "default", "everyday" or "zh-en"; a ValueError naming it else."""
    if model is None or model == "":
        return "auto"
    if not isinstance(model, str) or model not in CHOICES:
        raise ValueError(f"model must be one of {', '.join(CHOICES)}, got {model!r}")
    return model


@dataclass(frozen=True)
class Router:
    """The checks that pick a model for each sentence; any of them may be missing (its checkpoint file absent or
    refused): no truecaser leaves the case as written, no language check calls everything German, no domain guess
    sends everything to the default model. `everyday=False`: there is no everyday model; `chinese=False`: no Chinese
    model (Chinese still reads like "Chinese", and the default model guesses)."""

    domain: DomainGuess | None = None
    language: LanguageCheck | None = None
    truecaser: Truecaser | None = None
    everyday: bool = True
    chinese: bool = False
    umlauts: Umlauts | None = None

    @classmethod
    def of_checkpoint(
        cls, model_id: str | Path, revision: str | None = None, everyday: bool = True, chinese: bool = False
    ) -> Router:
        """The default checkpoint's domain guess, language check and truecaser (the guess and the truecaser from one
        read of its domain file)."""
        found = checked_domain(model_id, revision)
        domain, truecaser = (guess_from(found[1]), Truecaser.from_counts(found[1]["counts"])) if found else (None, None)
        umlauts = Umlauts.from_counts(found[1]["counts"]) if found else None
        return cls(domain, load_language(model_id, revision), truecaser, everyday, chinese, umlauts)

    def prepared(self, sentence: str) -> tuple[str, list[tuple[str, str]]]:
        """The sentence (or text) as a model should read it, and the words changed (umlauts given back, recased)."""
        written = sentence.translate(FULL_WIDTH_MARKS)
        text = self.umlauts.restore(written)[0] if self.umlauts is not None else written
        text = self.truecaser.recase(text)[0] if self.truecaser is not None else text
        return text, word_changes(written, text)

    def split(self, text: str) -> list[tuple[str, str]]:
        """A text's sentences, each (as written, as a model reads it). A text written all in lowercase is recased
        as a whole before it is split, so that its sentences start with the capitals the splitter looks for."""
        read = self.truecaser.recase(text)[0] if self.truecaser is not None else text  # its marks kept, to split by
        if len(read) != len(text):  # a letter that changed length when recased: sentence by sentence
            return [(s, self.prepared(s)[0]) for s in split_sentences(text)]
        pairs, at = [], 0
        for sentence in split_sentences(read):  # where the recased text ends its sentences; each read as written
            at = read.index(sentence, at)
            written = text[at : at + len(sentence)]
            pairs.append((written, self.prepared(written)[0]))
            at += len(sentence)
        return pairs

    def route(self, sentence: str, model: str = "auto", written: str | None = None) -> Route:
        """One sentence's route; `model` ("auto", "default", "everyday") forces one model where it is not "auto";
        `written`: the sentence as the visitor wrote it, where `sentence` was already read by `split`."""
        if not isinstance(sentence, str):
            raise TypeError(f"expected text, got {type(sentence).__name__}")
        model = checked_choice(model)
        if reads_chinese(written if written is not None else sentence):
            return self.chinese_route(written if written is not None else sentence, model)
        text, recased = self.prepared(sentence)
        if written is not None and written != sentence:
            recased = word_changes(written.translate(FULL_WIDTH_MARKS), text)
        language: dict[str, Any] = (
            self.language.report(text) if self.language is not None else {"german": True, "words": []}
        )
        if not language["german"]:
            reads_like, words, why = "not German", language["words"], language["why"]
        elif self.domain is not None:
            report = self.domain.report(text)
            reads_like, words, why = ("everyday" if report["everyday"] else "captions"), report["words"], ""
        else:
            reads_like, words, why = "captions", [], ""
        chosen = "everyday" if reads_like == "everyday" and self.everyday else "default"
        if model == "zh-en":  # German (or other text) forced onto the Chinese model: said as it reads
            if not self.chinese:
                raise ValueError("model='zh-en': this app has no Chinese model (ZH_MODEL_ID=none)")
            text = normalise_chinese(sentence if written is None else written)
            return Route(text, "zh-en", reads_like, True, words, [], why, sentence if written is None else written)
        if model != "auto":
            if model == "everyday" and not self.everyday:
                raise ValueError("model='everyday': this app has no everyday model (EVERYDAY_MODEL_ID=none)")
            chosen = model
        return Route(
            text, chosen, reads_like, model != "auto", words, recased, why, sentence if written is None else written
        )

    def chinese_route(self, sentence: str, model: str) -> Route:
        """A Chinese sentence's route: in Simplified characters with Chinese punctuation to the Chinese model (or to
        the model forced, or to the default one where the app has no Chinese model)."""
        if model == "zh-en" and not self.chinese:
            raise ValueError("model='zh-en': this app has no Chinese model (ZH_MODEL_ID=none)")
        if model == "everyday" and not self.everyday:
            raise ValueError("model='everyday': this app has no everyday model (EVERYDAY_MODEL_ID=none)")
        text = normalise_chinese(sentence)
        chosen = model if model != "auto" else ("zh-en" if self.chinese else "default")
        if chosen != "zh-en":  # a German model given Chinese reads it as the German path would
            return Route(self.prepared(sentence)[0], chosen, "Chinese", model != "auto", [], [], "", sentence)
        return Route(text, chosen, "Chinese", model != "auto", [], simplified(sentence), "", sentence)


def simplified(sentence: str) -> list[tuple[str, str]]:
    """The Traditional characters of a Chinese sentence and the Simplified ones read instead, each pair once."""
    read = to_simplified(sentence)
    if len(read) != len(sentence):
        return [(sentence, read)] if read != sentence else []
    return list(dict.fromkeys((a, b) for a, b in zip(sentence, read) if a != b))


class RoutedTranslator:
    """A captions translator, an everyday translator and the router that picks one for each sentence."""

    def __init__(self, captions: Translator, everyday: Translator, router: Router | DomainGuess):
        self.translators = {"default": captions, "everyday": everyday}
        self.router = router if isinstance(router, Router) else Router(domain=router)

    @classmethod
    def from_pretrained(
        cls,
        captions_id: str | Path,
        everyday_id: str | Path,
        revision: str | None = None,
        device: str | torch.device | None = None,
    ) -> RoutedTranslator:
        """Both checkpoints (folders or Hub repos; `revision` is the captions repo's), and the captions
        checkpoint's router: a CheckpointError where it has no domain guess, or where its file is refused."""
        router = Router.of_checkpoint(captions_id, revision)
        if router.domain is None:
            raise CheckpointError(
                f"{captions_id} has no usable {DOMAIN_FILE} (write it with python -m training.domain "
                f"--checkpoint {captions_id}): the router cannot tell captions from everyday German"
            )
        return cls(
            Translator.from_pretrained(captions_id, revision=revision, device=device),
            Translator.from_pretrained(everyday_id, device=device),
            router,
        )

    def route(self, text: str) -> str:
        """ "everyday" where the sentence reads like everyday German (the everyday model translates it), else "captions"."""
        return "everyday" if self.router.route(text).model == "everyday" else "captions"

    def translate(
        self,
        text: str | Sequence[str],
        num_beams: int = 4,
        length_penalty: float = 1.0,
        max_new_tokens: int | None = None,
        batch_size: int = 64,
        model: str = "auto",
    ) -> str | list[str]:
        """As Translator.translate, each sentence by the model its route names; the order of the texts is kept."""
        single = isinstance(text, str)
        texts = [text] if isinstance(text, str) else list(text)
        routes = [self.router.route(t, model) for t in texts]
        outputs = [""] * len(texts)
        for name, translator in self.translators.items():
            picked = [i for i, r in enumerate(routes) if r.model == name]
            if picked:
                english = translator.translate(
                    [routes[i].text for i in picked],
                    num_beams=num_beams,
                    length_penalty=length_penalty,
                    max_new_tokens=max_new_tokens,
                    batch_size=batch_size,
                )
                for i, out in zip(picked, english):
                    outputs[i] = out
        return outputs[0] if single else outputs
