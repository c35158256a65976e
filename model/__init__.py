"""Attention Lens: a hand-written encoder-decoder Transformer for German -> English."""

from .config import ConfigError, TransformerConfig
from .hub import CheckpointError
from .transformer import AttentionMaps, Transformer
from .translator import Explanation, Translator

__all__ = ["AttentionMaps", "CheckpointError", "ConfigError", "Explanation", "Transformer", "TransformerConfig", "Translator"]
