"""TransformerConfig: the one argument of the model, written to and read from config.json."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.checkpoint.json_file import CheckpointFileError, read_json


class ConfigError(ValueError):
    """A configuration that cannot describe a model: bad value, unknown key, missing key."""


# Upper bounds, far above any model this project trains (the paper's big model is d_model=1024,
# n_heads=16, 6+6 layers, d_ff=4096), and low enough that a typo in config.json is refused before
# anything is allocated: max_len=2,000,000 alone would cost 2 GB of positional encoding.
LIMITS = {
    "vocab_size": 262_144,
    "d_model": 8_192,
    "n_heads": 64,
    "n_encoder_layers": 64,
    "n_decoder_layers": 64,
    "d_ff": 65_536,
    "max_len": 16_384,
}
MAX_CONFIG_BYTES = 64_000


@dataclass
class TransformerConfig:
    """Sizes and special token ids of the encoder-decoder Transformer.

    Defaults are the small model that the demo ships; the paper's base model is
    d_model=512, n_heads=8, 6+6 layers, d_ff=2048.
    """

    vocab_size: int = 8000
    d_model: int = 256
    n_heads: int = 4
    n_encoder_layers: int = 3
    n_decoder_layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.1
    max_len: int = 256
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    norm_first: bool = False  # False: Post-LN as in the paper; True: Pre-LN

    def __post_init__(self) -> None:
        for name, limit in LIMITS.items():
            value = getattr(self, name)
            # bool is a subclass of int; `n_heads: true` in a config.json is a mistake, not 1.
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
            if value > limit:
                raise ConfigError(f"{name} must be at most {limit:,}, got {value:,}")
        if self.d_model % self.n_heads != 0:
            raise ConfigError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if (
            not isinstance(self.dropout, (int, float))
            or isinstance(self.dropout, bool)
            or not 0.0 <= self.dropout < 1.0
        ):
            raise ConfigError(f"dropout must be a number in [0, 1), got {self.dropout!r}")
        if not isinstance(self.norm_first, bool):
            raise ConfigError(f"norm_first must be true or false, got {self.norm_first!r}")
        special = {"pad_id": self.pad_id, "bos_id": self.bos_id, "eos_id": self.eos_id}
        for name, value in special.items():
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < self.vocab_size:
                raise ConfigError(f"{name} must be an integer in [0, vocab_size={self.vocab_size}), got {value!r}")
        if len(set(special.values())) != len(special):
            raise ConfigError(f"pad_id, bos_id and eos_id must be distinct, got {special}")

    @property
    def d_k(self) -> int:
        """Width of one attention head."""
        return self.d_model // self.n_heads

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TransformerConfig:
        """Build a config from a dict that has exactly the config's keys (no more, no fewer)."""
        if not isinstance(data, dict):
            raise ConfigError(f"a config must be a JSON object, got {type(data).__name__}")
        names = [field.name for field in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        missing = [name for name in names if name not in data]
        if unknown:
            raise ConfigError(f"unknown config key(s): {', '.join(unknown)} (expected: {', '.join(names)})")
        if missing:
            raise ConfigError(f"missing config key(s): {', '.join(missing)}")
        return cls(**data)

    @classmethod
    def from_json_file(cls, path: str | Path) -> TransformerConfig:
        """Read config.json; every problem names the file."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"{path} does not exist")
        try:
            data = read_json(path, MAX_CONFIG_BYTES, max_depth=1)  # one object of numbers and true/false
        except CheckpointFileError as err:
            raise ConfigError(str(err)) from None
        try:
            return cls.from_dict(data)
        except (ConfigError, TypeError) as err:
            raise ConfigError(f"{path}: {err}") from None
