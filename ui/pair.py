"""The page's translator: two checkpoints and the router that gives each German sentence to the one that knows it.

Every view and endpoint asks the pair for a sentence's model (`pick`) instead of holding one translator: the
translate view, every map, the step-through, why-not, Q/K/V, the ladder, who-wrote, patching, the head lab, the
evidence and the alarm (each model's own), and the API. Both models are loaded once, at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lens import cost
from lens.cost import Budget
from lens.explain import MAX_SENTENCES, DecodingOptions, SentenceExplanation, sentences_of
from training_data.alarm import Familiarity
from translation import Translator
from ui.routed import MODELS, Route, Router

from .shared_calls import batched_calls

# What the page and the API call each model, and what each learned from.
NAMES = {"default": "the default model", "everyday": "the everyday model", "zh-en": "the Chinese model"}


@dataclass
class Served:
    """One checkpoint as the app serves it."""

    name: str  # "default", "everyday" or "zh-en"
    translator: Translator
    familiarity: Familiarity = field(default_factory=Familiarity)


@dataclass
class Pair:
    """The default model, the everyday model (or None), the router, and the Chinese model (or None)."""

    default: Served
    everyday: Served | None = None
    router: Router = field(default_factory=lambda: Router(everyday=False))
    chinese: Served | None = None

    @classmethod
    def single(cls, translator: Translator, familiarity: Familiarity | None = None) -> Pair:
        """One model and no router: every sentence goes to it, as it is written (tests, notebooks, ui.standalone.show)."""
        return cls(Served("default", translator, familiarity or Familiarity()))

    @property
    def models(self) -> dict[str, Served]:
        return {m.name: m for m in (self.default, self.everyday, self.chinese) if m is not None}

    def served(self, name: str) -> Served:
        found = self.models.get(name)
        if found is None:
            raise ValueError(f"model must be one of {', '.join(('auto', *self.models))}, got {name!r}")
        return found

    def pick(self, sentence: str, model: str = "auto") -> tuple[Route, Served]:
        """A sentence's route and the model that translates it; `model` forces one ("default", "everyday", "zh-en")."""
        route = self.router.route(sentence, model)
        return route, self.served(route.model)

    def sentences(self, text: str) -> tuple[list[tuple[str, str]], int]:
        """A text's sentences (at most MAX_SENTENCES), each as written and as a model reads it (lens/routed.Router.split:
        a text written all in lowercase is recased before it is split), and how many were left out."""
        sentences_of(text)  # its type and length, checked
        both = self.router.split(text)
        return both[:MAX_SENTENCES], max(0, len(both) - MAX_SENTENCES)

    def grouped(self, sentences: list, model: str | list[str] = "auto") -> tuple[list[Route], dict[str, list[int]]]:
        """Each sentence's route, and the positions each model translates (in order); a sentence is its text, or
        (as written, as read) from `sentences`; `model` is one choice for all, or one per sentence."""
        choices = [model] * len(sentences) if isinstance(model, str) else list(model)
        pairs = [s if isinstance(s, tuple) else (s, s) for s in sentences]
        routes = [
            self.router.route(read, m, written=written) for (written, read), m in zip(pairs, choices, strict=True)
        ]
        groups = {name: [i for i, r in enumerate(routes) if r.model == name] for name in MODELS}
        return routes, {name: picked for name, picked in groups.items() if picked}

    def each(
        self, sentences: list, model: str | list[str], run: Callable[[Served, list[str]], list]
    ) -> tuple[list[Route], list]:
        """`run(served, texts)` once per model with its sentences (as routed and prepared), the answers in order."""
        routes, groups = self.grouped(sentences, model)
        answers: list = [None] * len(sentences)
        for name, picked in groups.items():
            for i, answer in zip(picked, run(self.served(name), [routes[i].text for i in picked])):
                answers[i] = answer
        return routes, answers

    @property
    def max_len(self) -> int:
        return min(m.translator.config.max_len for m in self.models.values())


def explain_routed(
    pair: Pair,
    sentences: list,
    options: DecodingOptions,
    budget: Budget,
    model: str | list[str] = "auto",
    prefix: str | None = None,
) -> list[tuple[Route, Served, SentenceExplanation]]:
    """Each sentence explained by its model (batched with other callers' calls to that model), in order. The
    budget holds for all of them together: checked on the whole text first, then each model's share gets what
    the models before it left."""
    routes, groups = pair.grouped(sentences, model)
    lengths = [len(pair.served(r.model).translator.encode_source(r.text)[0]) for r in routes]
    cost.check_before(budget, pair.default.translator.config, lengths, options.max_new_tokens)
    found: list = [None] * len(sentences)
    left = budget.max_weights
    for name, picked in groups.items():
        served = pair.served(name)
        share = Budget(budget.what, left, budget.advice)
        for i, s in zip(
            picked, batched_calls(served.translator).explain([routes[i].text for i in picked], (options, share, prefix))
        ):
            found[i] = (routes[i], served, s)
            left -= cost.map_weights(
                served.translator.config, len(s.explanation.source_tokens), len(s.explanation.target_tokens)
            )
    return found
