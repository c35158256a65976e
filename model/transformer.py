"""The encoder-decoder Transformer of "Attention Is All You Need", loadable from the Hub.

Shape legend: B batch, S source length, T target length, H heads, D model width, V vocabulary.
The paper and nothing else: translating (greedy and beam search, the key/value cache) lives in
generation/, the whole search in C++ in compiled/, the checkpoint files in model/checkpoint/.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import Tensor, nn

from .attention import padding_mask, target_mask
from .checkpoint.hub import HUB_METADATA, HUB_REPO_ID, resolve_file
from .checkpoint.weights import load_checkpoint, save_weights, write_config
from .config import TransformerConfig
from .heads import HeadMask
from .layers import DecoderLayer, EncoderLayer, PositionalEncoding
from .taps import Tap, Tapped, offer, tapped, under


@dataclass
class AttentionMaps:
    """Post-softmax attention weights of every layer, one tensor per layer."""

    encoder: list[Tensor]  # each (B, H, S, S)
    decoder: list[Tensor]  # each (B, H, T, T)
    cross: list[Tensor]  # each (B, H, T, S)


class Transformer(
    nn.Module,
    PyTorchModelHubMixin,
    **HUB_METADATA,
    repo_url=f"https://huggingface.co/{HUB_REPO_ID}",
):
    """Encoder-decoder Transformer with one embedding shared by source, target and output."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if isinstance(config, dict):
            config = TransformerConfig.from_dict(config)
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {type(config).__name__}")
        self.config = config
        self.tokenizer_fingerprint: str | None = None  # of the tokenizer it is trained with; saved in the weights
        c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = PositionalEncoding(c.d_model, c.max_len)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first) for _ in range(c.n_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first) for _ in range(c.n_decoder_layers)
        )
        # Pre-LN leaves the residual stream unnormalised, so each stack ends with a LayerNorm.
        self.encoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight  # tied: the paper's section 3.4
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier for matrices; embeddings N(0, D^-1/2) so that embed * sqrt(D) has unit variance."""
        for name, param in self.named_parameters():
            if param.dim() > 1 and name != "embed.weight":
                nn.init.xavier_uniform_(param)
            elif name.endswith("bias"):
                nn.init.zeros_(param)
        nn.init.normal_(self.embed.weight, mean=0.0, std=self.config.d_model**-0.5)

    def embed_tokens(self, ids: Tensor, offset: int = 0, tap: Tapped | None = None) -> Tensor:
        """(B, L) ids -> (B, L, D). The sqrt(D) scale keeps the tied embedding, whose entries are
        ~D^-1/2 so that logits start small, on the same scale as the positional encoding."""
        tokens = offer(tap, "tokens", self.embed(ids))  # (B, L, D)
        x = offer(tap, "embed", self.pos(tokens * math.sqrt(self.config.d_model), offset))
        return self.dropout(x) if self.training else x

    def encode(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        need_weights: bool = False,
        head_mask: HeadMask | None = None,
        tap: Tap | None = None,
    ) -> tuple[Tensor, list[Tensor]]:
        """src (B, S) -> memory (B, S, D), and the encoder self-attention maps when asked for.
        `tap` (model/taps.py) sees every intermediate, named "encoder.*", and may replace it."""
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, S)
        offered = under(tapped(tap), "encoder")
        x = self.embed_tokens(src, tap=offered)
        maps = []
        for i, layer in enumerate(self.encoder_layers):
            heads = None if head_mask is None else head_mask.encoder[i]
            x, weights = layer(x, src_mask, need_weights, heads, under(offered, str(i)))
            if need_weights:
                maps.append(weights)
        return offer(offered, "out", self.encoder_norm(x)), maps

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_mask: Tensor | None,
        tgt_mask: Tensor | None = None,
        need_weights: bool = False,
        head_mask: HeadMask | None = None,
        tap: Tap | None = None,
    ) -> tuple[Tensor, list[Tensor], list[Tensor]]:
        """tgt (B, T) -> decoder states (B, T, D), self-attention maps, cross-attention maps.

        tgt_mask defaults to causal + target padding. `tap` sees "decoder.*" (model/taps.py).
        """
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.config.pad_id)  # (B, 1, T, T)
        offered = under(tapped(tap), "decoder")
        x = self.embed_tokens(tgt, tap=offered)
        self_maps, cross_maps = [], []
        for i, layer in enumerate(self.decoder_layers):
            self_heads, cross_heads = (None, None) if head_mask is None else (head_mask.decoder[i], head_mask.cross[i])
            x, self_weights, cross_weights = layer(
                x, memory, src_mask, tgt_mask, need_weights, self_heads, cross_heads, under(offered, str(i))
            )
            if need_weights:
                self_maps.append(self_weights)
                cross_maps.append(cross_weights)
        return offer(offered, "out", self.decoder_norm(x)), self_maps, cross_maps

    def forward(
        self,
        src: Tensor,
        tgt_in: Tensor,
        return_attention: bool = False,
        head_mask: HeadMask | None = None,
        tap: Tap | None = None,
    ) -> Tensor | tuple[Tensor, AttentionMaps]:
        """Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V) [, AttentionMaps].

        `head_mask` (model/heads.py) switches heads off; None runs every head. `tap` (model/taps.py)
        sees every named intermediate and may replace it.
        """
        head_mask = self.checked_head_mask(head_mask)
        src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, S)
        memory, encoder_maps = self.encode(src, src_mask, need_weights=return_attention, head_mask=head_mask, tap=tap)
        hidden, decoder_maps, cross_maps = self.decode(
            tgt_in, memory, src_mask, need_weights=return_attention, head_mask=head_mask, tap=tap
        )
        logits = offer(tapped(tap), "logits", self.lm_head(hidden))  # (B, T, V)
        if return_attention:
            return logits, AttentionMaps(encoder=encoder_maps, decoder=decoder_maps, cross=cross_maps)
        return logits

    def checked_head_mask(self, head_mask: HeadMask | None) -> HeadMask | None:
        """The mask checked against the config, on the model's device and dtype."""
        if head_mask is None:
            return None
        if not isinstance(head_mask, HeadMask):
            raise TypeError(f"head_mask must be a model.heads.HeadMask, got {type(head_mask).__name__}")
        head_mask.check(self.config)
        return head_mask.to(self.embed.weight.device, self.embed.weight.dtype)

    # ----- the Hub mixin's hooks: save and load --------------------------------------------

    def _save_pretrained(self, save_directory: Path) -> None:
        """The mixin's saving hook: model.safetensors, with the config recorded in its header, and config.json."""
        save_weights(self, Path(save_directory) / "model.safetensors")
        write_config(self.config, Path(save_directory) / "config.json")

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str | Path, *, revision: str | None = None, **kwargs
    ) -> Transformer:
        """The mixin's from_pretrained (which calls `_from_pretrained`), after finding config.json.

        The mixin reads config.json itself, leniently and without naming the file, and retries an
        unreachable Hub for 23 s; finding and checking the file first makes both fast and clear.
        """
        where = {
            key: kwargs[key] for key in ("cache_dir", "force_download", "token", "local_files_only") if key in kwargs
        }
        config_path = resolve_file(pretrained_model_name_or_path, "config.json", revision=revision, **where)
        TransformerConfig.from_json_file(config_path)
        if not os.path.isdir(pretrained_model_name_or_path):
            revision = config_path.parent.name  # the commit config.json came from: every file from that one
        return super().from_pretrained(pretrained_model_name_or_path, revision=revision, **kwargs)

    @classmethod
    def _from_pretrained(
        cls,
        *,
        model_id: str,
        revision: str | None,
        cache_dir: str | Path | None,
        force_download: bool,
        local_files_only: bool,
        token: str | bool | None,
        map_location: str | torch.device = "cpu",
        config: dict | None = None,
        **unexpected,
    ) -> Transformer:
        """The mixin's loading hook: config.json read strictly (exactly the config's keys, each in
        range) and model.safetensors checked against it by its header before anything is built.

        `config` is the mixin's lenient reading of config.json; it is read again here, strictly.
        """
        if unexpected:
            raise TypeError(f"unexpected argument(s): {', '.join(sorted(unexpected))}")
        where: dict[str, Any] = dict(
            revision=revision,
            cache_dir=cache_dir,
            force_download=force_download,
            token=token,
            local_files_only=local_files_only,
        )
        config_path = resolve_file(model_id, "config.json", **where)
        weights_path = resolve_file(model_id, "model.safetensors", **where)
        model = load_checkpoint(cls, TransformerConfig.from_json_file(config_path), config_path, weights_path)
        return model.to(map_location).eval()
