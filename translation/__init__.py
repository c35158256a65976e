"""Translator: the tokenizer, the model and the search together; German text in, English text and its maps out."""

from .translator import Explanation, Translator

__all__ = ["Explanation", "Translator"]
