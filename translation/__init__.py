"""Translator: the tokenizer, the model and the search together; German text in, English text out (its maps:
lens/maps.py)."""

from .translator import Translator

__all__ = ["Translator"]
