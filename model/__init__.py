"""Attention Lens: the encoder-decoder Transformer of "Attention Is All You Need", written by hand."""

from .checkpoint.hub import CheckpointError
from .config import ConfigError, TransformerConfig
from .transformer import AttentionMaps, Transformer

__all__ = ["AttentionMaps", "CheckpointError", "ConfigError", "Transformer", "TransformerConfig"]
