"""Two checkpoints and a router: each text goes to the model whose kind of German it reads like.

The default model (checkpoints/de-en: captions first, some everyday German) translates photo captions best,
the everyday model (checkpoints/de-en-everyday) everyday speech; the default checkpoint's domain guess (lens/domain.py,
domain.json.gz) tells the two kinds apart before anything is translated, so each text is translated once, by
one of them. recipes/everyday/route.py measures the pair on the dev sets (docs/everyday.md, "Routing").

    from lens.routed import RoutedTranslator
    both = RoutedTranslator.from_pretrained("checkpoints/de-en", "checkpoints/de-en-everyday")
    both.translate(["Ein Hund rennt über die Wiese.", "Wo ist der Bahnhof?"])
    both.route("Wo ist der Bahnhof?")  # "everyday"
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from model import CheckpointError
from translation import Translator

from .domain import DOMAIN_FILE, DomainGuess, load_domain

KINDS = ("captions", "everyday")


class RoutedTranslator:
    """A captions translator, an everyday translator and the guess that picks one for each text."""

    def __init__(self, captions: Translator, everyday: Translator, domain: DomainGuess):
        self.translators = {"captions": captions, "everyday": everyday}
        self.domain = domain

    @classmethod
    def from_pretrained(cls, captions_id: str | Path, everyday_id: str | Path, revision: str | None = None,
                        device: str | torch.device | None = None) -> "RoutedTranslator":
        """Both checkpoints (folders or Hub repos; `revision` is the captions repo's), and the captions
        checkpoint's domain guess: a CheckpointError where it has none, or where its file is refused."""
        domain = load_domain(captions_id, revision)
        if domain is None:
            raise CheckpointError(f"{captions_id} has no usable {DOMAIN_FILE} (write it with python -m training.domain "
                                  f"--checkpoint {captions_id}): the router cannot tell captions from everyday German")
        return cls(Translator.from_pretrained(captions_id, revision=revision, device=device),
                   Translator.from_pretrained(everyday_id, device=device), domain)

    def route(self, text: str) -> str:
        """"everyday" where the text as a whole reads like everyday German, else "captions"."""
        if not isinstance(text, str):
            raise TypeError(f"expected text, got {type(text).__name__}")
        return KINDS[self.domain.everyday(text)]

    def translate(self, text: str | Sequence[str], num_beams: int = 4, length_penalty: float = 1.0,
                  max_new_tokens: int | None = None, batch_size: int = 64) -> str | list[str]:
        """As Translator.translate, each text by the model its route names; the order of the texts is kept."""
        single = isinstance(text, str)
        texts = [text] if single else list(text)
        routes = [self.route(t) for t in texts]
        outputs = [""] * len(texts)
        for kind, translator in self.translators.items():
            picked = [i for i, r in enumerate(routes) if r == kind]
            if picked:
                english = translator.translate([texts[i] for i in picked], num_beams=num_beams, length_penalty=length_penalty,
                                               max_new_tokens=max_new_tokens, batch_size=batch_size)
                for i, out in zip(picked, english):
                    outputs[i] = out
        return outputs[0] if single else outputs
