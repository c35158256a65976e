"""Translating with the model: greedy and beam search over a decoding step with a key/value cache."""

from .search import SearchObserver, SearchOptions, generate

__all__ = ["SearchObserver", "SearchOptions", "generate"]
