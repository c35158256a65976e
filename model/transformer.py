"""The encoder-decoder Transformer of "Attention Is All You Need", loadable from the Hub.

Shape legend: B batch, S source length, T target length, H heads, D model width, V vocabulary,
N decoder rows while generating (B x beams), t tokens decoded so far.
"""

from __future__ import annotations

import math
import os
import weakref
from dataclasses import dataclass
from collections.abc import Sequence
from pathlib import Path

import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import Tensor, nn

from .attention import padding_mask, target_mask
from .config import TransformerConfig
from .decoding import SearchObserver, SearchOptions, beam_search, greedy_search
from .heads import HeadMask
from .hub import HUB_METADATA, HUB_REPO_ID, resolve_file
from .layers import DecoderLayer, DecoderStepWeights, EncoderLayer, PositionalEncoding
from .step import KVCache
from .step_linear import check_precision, step_linear
# load_weights is imported from here by training (model.transformer.load_weights).
from .weights import load_checkpoint, load_weights, save_weights, write_config  # noqa: F401


@dataclass
class AttentionMaps:
    """Post-softmax attention weights of every layer, one tensor per layer."""

    encoder: list[Tensor]  # each (B, H, S, S)
    decoder: list[Tensor]  # each (B, H, T, T)
    cross: list[Tensor]  # each (B, H, T, S)


# Weights derived for generation (laid out for steps, packed, int8), kept beside the model, not on
# it: they are no parameters, and a deepcopy or pickle of the model should neither carry nor
# fail on them.
_DERIVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass
class StepWeights:
    """The decoder's matrices laid out for one-token steps, in one precision."""

    layers: list[DecoderStepWeights]
    lm_head: object  # a model/step_linear.py layer: (N, D) -> (N, V)


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

    def embed_tokens(self, ids: Tensor, offset: int = 0, token_embedding: Tensor | None = None) -> Tensor:
        """(B, L) ids -> (B, L, D). The sqrt(D) scale keeps the tied embedding, whose entries are
        ~D^-1/2 so that logits start small, on the same scale as the positional encoding.
        `token_embedding` (B, L, D), when given, stands in for embed(ids): attribution moves it."""
        token_embedding = self.embed(ids) if token_embedding is None else token_embedding
        x = self.pos(token_embedding * math.sqrt(self.config.d_model), offset)  # (B, L, D)
        return self.dropout(x) if self.training else x

    def encode(
        self, src: Tensor, src_mask: Tensor | None = None, need_weights: bool = False, head_mask: HeadMask | None = None,
        source_embedding: Tensor | None = None,
    ) -> tuple[Tensor, list[Tensor]]:
        """src (B, S) -> memory (B, S, D), and the encoder self-attention maps when asked for.
        `source_embedding` (B, S, D) stands in for embed(src) (lens/attribute.py, lens/contrast.py)."""
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, S)
        x = self.embed_tokens(src, token_embedding=source_embedding)
        maps = []
        for i, layer in enumerate(self.encoder_layers):
            heads = None if head_mask is None else head_mask.encoder[i]
            x, weights = layer(x, src_mask, need_weights, heads)
            if need_weights:
                maps.append(weights)
        return self.encoder_norm(x), maps

    def decode(
        self, tgt: Tensor, memory: Tensor, src_mask: Tensor | None, tgt_mask: Tensor | None = None,
        need_weights: bool = False, head_mask: HeadMask | None = None,
    ) -> tuple[Tensor, list[Tensor], list[Tensor]]:
        """tgt (B, T) -> decoder states (B, T, D), self-attention maps, cross-attention maps.

        tgt_mask defaults to causal + target padding.
        """
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.config.pad_id)  # (B, 1, T, T)
        x = self.embed_tokens(tgt)
        self_maps, cross_maps = [], []
        for i, layer in enumerate(self.decoder_layers):
            self_heads, cross_heads = (None, None) if head_mask is None else (head_mask.decoder[i], head_mask.cross[i])
            x, self_weights, cross_weights = layer(x, memory, src_mask, tgt_mask, need_weights, self_heads, cross_heads)
            if need_weights:
                self_maps.append(self_weights)
                cross_maps.append(cross_weights)
        return self.decoder_norm(x), self_maps, cross_maps

    def memory_kv(self, memory: Tensor) -> list[tuple[Tensor, Tensor]]:
        """Every decoder layer's cross-attention keys and values of memory (B, S, D): (B, H, S, d_k) each."""
        return [layer.memory_kv(memory) for layer in self.decoder_layers]

    def store_decoder_transposed(self) -> None:
        """Keep each decoder matrix in memory as W^T, (in, out) row-major; shapes and values stay.

        Generation steps then multiply by the matrices where they lie (model/step_linear.py)
        instead of by copies: 11 MB less for the shipped model. Translator.from_pretrained does this
        on a CPU.
        """
        with torch.no_grad():
            for layer in self.decoder_layers:
                for linear in (layer.self_attn.in_proj, layer.self_attn.out_proj, layer.cross_attn.in_proj,
                               layer.cross_attn.out_proj, layer.ff.linear1, layer.ff.linear2):
                    linear.weight.data = linear.weight.data.t().contiguous().t()  # (out, in), strides (1, out)

    def step_weights(self, precision: str = "fp32") -> StepWeights:
        """The decoder's matrices for steps in `precision` ("fp32" or "int8"), built once and kept
        until a parameter changes (training steps, load_state_dict and .to() all change one; a
        write through `param.data` does not count: write to the parameter under torch.no_grad())."""
        check_precision(precision)
        return self._derived(("step", precision), lambda: StepWeights(
            [layer.step_weights(precision) for layer in self.decoder_layers],
            step_linear(self.lm_head.weight, self.lm_head.bias, precision)))

    def parameter_versions(self) -> tuple:
        """Where each parameter lies and how often it was written: changed by training, load_state_dict or .to()."""
        return tuple((p.data_ptr(), p._version) for p in self.parameters())

    def _derived(self, key: tuple, build):
        """What `build` makes of the parameters, rebuilt only when one of them has changed."""
        source = self.parameter_versions()
        built = _DERIVED.setdefault(self, {})
        if key not in built or built[key][0] != source:
            with torch.no_grad():
                built[key] = (source, build())
        return built[key][1]

    def decode_step(
        self, tgt_last: Tensor, position: int, caches: list[KVCache], memory_kv: list[tuple[Tensor, Tensor]],
        step_weights: StepWeights, src_mask: Tensor, need_weights: bool = False,
        head_mask: HeadMask | None = None,
    ) -> tuple[Tensor, list[Tensor], list[Tensor]]:
        """`decode` + `lm_head` for the newest token only: tgt_last (N, 1) at `position` -> logits (N, V),
        self-attention rows (N, H, 1, t), cross-attention rows (N, H, 1, S); caches hold earlier steps,
        step_weights from `step_weights()`.

        src_mask (B, 1, 1, S): bool, or additive (0 / -inf) when no weights are asked for.
        """
        x = self.embed_tokens(tgt_last, offset=position)[:, 0]  # (N, D)
        self_maps, cross_maps = [], []
        layers = zip(self.decoder_layers, caches, memory_kv, step_weights.layers)
        for i, (layer, cache, kv, weights) in enumerate(layers):
            self_heads, cross_heads = (None, None) if head_mask is None else (head_mask.decoder[i], head_mask.cross[i])
            x, self_weights, cross_weights = layer.step(x, cache, kv, src_mask, weights, need_weights, self_heads,
                                                        cross_heads)
            if need_weights:
                self_maps.append(self_weights)
                cross_maps.append(cross_weights)
        return step_weights.lm_head(self.decoder_norm(x)), self_maps, cross_maps  # (N, V)

    def forward(
        self, src: Tensor, tgt_in: Tensor, return_attention: bool = False, head_mask: HeadMask | None = None
    ) -> Tensor | tuple[Tensor, AttentionMaps]:
        """Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V) [, AttentionMaps].

        `head_mask` (model/heads.py) switches heads off; None runs every head.
        """
        head_mask = self.checked_head_mask(head_mask)
        src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, S)
        memory, encoder_maps = self.encode(src, src_mask, need_weights=return_attention, head_mask=head_mask)
        hidden, decoder_maps, cross_maps = self.decode(tgt_in, memory, src_mask, need_weights=return_attention,
                                                       head_mask=head_mask)
        logits = self.lm_head(hidden)  # (B, T, V)
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

    @torch.inference_mode()
    def generate(
        self,
        src: Tensor,
        max_new_tokens: int = 64,
        num_beams: int = 1,
        length_penalty: float = 1.0,
        use_cache: bool = True,
        min_new_tokens: int = 0,
        prefix: Sequence[int] | Tensor | None = None,
        head_mask: HeadMask | None = None,
        observer: SearchObserver | None = None,
        precision: str = "fp32",
        shortlist: Tensor | None = None,
        no_repeat_ngram: int = 0,
    ) -> Tensor:
        """Translate src (B, S) -> (B, T') ids after BOS, up to and including EOS, right-padded.

        Greedy when num_beams == 1, beam search otherwise (model/decoding.py). `prefix`: token
        ids (without BOS) every output starts with; decoding is free after them. `observer`
        sees every step of the search (lens/trace.py records a trace with it). `precision`
        "int8" decodes with int8 weights on the CPU (faster, approximate; model/step_linear.py).
        `shortlist`: sorted candidate ids; the output layer multiplies only those rows (model/shortlist.py).
        `no_repeat_ngram` n > 0: no n consecutive pieces are written twice in one output.
        """
        check_precision(precision)
        options = SearchOptions(max_new_tokens=max_new_tokens, min_new_tokens=min_new_tokens, use_cache=use_cache,
                                prefix=prefix, head_mask=self.checked_head_mask(head_mask), observer=observer,
                                precision=precision, shortlist=shortlist, no_repeat_ngram=no_repeat_ngram)
        was_training = self.training
        if was_training:
            self.eval()  # generation never drops out (walking the modules costs a millisecond: only when needed)
        try:
            if num_beams == 1:
                return greedy_search(self, src, options)
            return beam_search(self, src, num_beams, length_penalty, options)
        finally:
            if was_training:
                self.train()

    # ----- the Hub mixin's hooks: save and load --------------------------------------------

    def _save_pretrained(self, save_directory: Path) -> None:
        """The mixin's saving hook: model.safetensors, with the config recorded in its header, and config.json."""
        save_weights(self, Path(save_directory) / "model.safetensors")
        write_config(self.config, Path(save_directory) / "config.json")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | Path, *, revision: str | None = None,
                        **kwargs) -> "Transformer":
        """The mixin's from_pretrained (which calls `_from_pretrained`), after finding config.json.

        The mixin reads config.json itself, leniently and without naming the file, and retries an
        unreachable Hub for 23 s; finding and checking the file first makes both fast and clear.
        """
        where = {key: kwargs[key] for key in ("cache_dir", "force_download", "token", "local_files_only") if key in kwargs}
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
    ) -> "Transformer":
        """The mixin's loading hook: config.json read strictly (exactly the config's keys, each in
        range) and model.safetensors checked against it by its header before anything is built.

        `config` is the mixin's lenient reading of config.json; it is read again here, strictly.
        """
        if unexpected:
            raise TypeError(f"unexpected argument(s): {', '.join(sorted(unexpected))}")
        where = dict(revision=revision, cache_dir=cache_dir, force_download=force_download, token=token,
                     local_files_only=local_files_only)
        config_path = resolve_file(model_id, "config.json", **where)
        weights_path = resolve_file(model_id, "model.safetensors", **where)
        model = load_checkpoint(cls, TransformerConfig.from_json_file(config_path), config_path, weights_path)
        return model.to(map_location).eval()

