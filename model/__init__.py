"""Attention Lens: the encoder-decoder Transformer of "Attention Is All You Need", written by hand."""

from .checkpoint.hub import CheckpointError
from .config import ConfigError, TransformerConfig
from .heads import KINDS
from .transformer import AttentionMaps, Transformer

__all__ = ["KINDS", "AttentionMaps", "CheckpointError", "ConfigError", "Transformer", "TransformerConfig"]
