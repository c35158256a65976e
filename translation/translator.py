"""Translator = tokenizer + model: text in, text out; save, load, push. (The maps of a translation: lens/maps.py.)

Shape legend: L layers, H heads, S source tokens, T target tokens.
"""

from __future__ import annotations

import json
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import torch
from huggingface_hub import HfApi
from tokenizers import Tokenizer

from compiled.native_search import NativeSearch
from generation.search import SearchObserver, generate
from generation.shortlist import Shortlist
from generation.step_weights import step_weights, store_decoder_transposed
from model.checkpoint.card import render_model_card
from model.checkpoint.hub import CheckpointError, resolve_file
from model.checkpoint.json_file import CheckpointFileError, read_json
from model.checkpoint.weights import CheckpointWarning, load_checkpoint
from model.config import TransformerConfig
from model.heads import HeadMask
from model.transformer import Transformer
from tokenizer import (
    UNK_ID,
    check_vocabulary,
    fingerprint,
    load_tokenizer,
)

MAX_CARD_BYTES = 1_000_000  # a model card longer than this is not read


def pick_device(device: str | torch.device | None = None) -> torch.device:
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def precision_of(quantize: str | None) -> str:
    """Translator's `quantize` argument (None or "int8") as a decoding precision."""
    if quantize in (None, "", "fp32"):
        return "fp32"
    if quantize != "int8":
        raise ValueError(f"quantize must be None or 'int8', got {quantize!r}")
    return "int8"


def check_tokenizer_fits(tokenizer: Tokenizer, config: TransformerConfig, source: str = "tokenizer") -> None:
    """Refuse a tokenizer of another size, or whose special tokens have other ids, than the config's:
    every id would name another token, and the translations would be garbage."""
    special_ids = {"<pad>": config.pad_id, "<s>": config.bos_id, "</s>": config.eos_id}
    try:
        check_vocabulary(tokenizer, config.vocab_size, special_ids, source)
    except ValueError as err:
        raise CheckpointError(f"{err}: the tokenizer and the model come from different checkpoints") from None


def read_card(path: Path) -> str | None:
    """README.md as text, read at most MAX_CARD_BYTES; one too large or not UTF-8 is left out with a
    warning that says why (a card is documentation: the checkpoint loads without it)."""
    with open(path, "rb") as file:
        raw = file.read(MAX_CARD_BYTES + 1)
    why = f"is larger than {MAX_CARD_BYTES // 1_000_000} MB" if len(raw) > MAX_CARD_BYTES else None
    if why is None:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as err:
            why = f"is not UTF-8 text (byte {err.start})"
    warnings.warn(f"{path} {why}: the model card is left out; the checkpoint loads without it", CheckpointWarning)
    return None


DECODING_FILE = "decoding.json"  # the checkpoint's decoding rule, chosen on dev: {"no_repeat_ngram": 3}
MAX_NO_REPEAT_NGRAM = 8
MAX_DECODING_BYTES = 4096  # the shipped one is 23 bytes


def read_decoding_rule(model_id, revision, hub_kwargs: dict) -> int:
    """The checkpoint's no_repeat_ngram (decoding.json; 0 without one). A bad file is refused naming it."""
    try:
        path = resolve_file(model_id, DECODING_FILE, revision=revision, **hub_kwargs)
    except CheckpointError:
        return 0
    try:
        rule = read_json(path, MAX_DECODING_BYTES, max_depth=1)
        value = rule["no_repeat_ngram"]
    except CheckpointFileError as err:
        raise CheckpointError(f'{err} (it holds {{"no_repeat_ngram": n}})') from None
    except (TypeError, KeyError) as err:
        raise CheckpointError(
            f'{path}: not a decoding rule ({type(err).__name__}: {err}); it holds {{"no_repeat_ngram": n}}'
        ) from None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_NO_REPEAT_NGRAM:
        raise CheckpointError(
            f"{path}: no_repeat_ngram must be a whole number from 0 to {MAX_NO_REPEAT_NGRAM}, got {value!r}"
        )
    return value


def check_tokenizer_is_the_models(tokenizer: Tokenizer, model: Transformer, source: str = "the tokenizer") -> None:
    """Refuse a tokenizer other than the one the weights record (tokenizer.fingerprint): the same size and
    special ids but other tokens would translate into garbage. Weights without a record take this one's."""
    own = fingerprint(tokenizer)
    recorded = getattr(model, "tokenizer_fingerprint", None)
    if recorded is None:
        model.tokenizer_fingerprint = own  # recorded when the model is saved
    elif recorded != own:
        raise CheckpointError(
            f"{source} ({own}) is not the tokenizer these weights were trained with ({recorded}): "
            "it comes from another checkpoint; download or save the checkpoint again"
        )


class Translator:
    """German -> English with a Transformer and its BPE tokenizer."""

    def __init__(
        self,
        model: Transformer,
        tokenizer: Tokenizer,
        device: str | torch.device | None = None,
        model_card: str | None = None,
        quantize: str | None = None,
    ):
        """`quantize="int8"` decodes with int8 weights on the CPU (generation/step_linear.py): faster on
        batches, approximate; `explain`'s maps still come from the fp32 teacher-forced pass, exact."""
        check_tokenizer_fits(tokenizer, model.config)
        check_tokenizer_is_the_models(tokenizer, model)
        self.device = pick_device(device)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.model_card = model_card  # the README.md this checkpoint came with, kept on save
        self.precision = precision_of(quantize)
        self.shortlist: Shortlist | None = None  # load_shortlist(): the output layer's candidates (opt-in)
        self.no_repeat_ngram = 0  # n > 0: no n pieces in a row written twice (decoding.json of the checkpoint)
        self.fast_search: NativeSearch | None = None  # compile(): the whole search in C++, where it builds
        if self.precision == "int8":
            step_weights(self.model, "int8")  # pack once now, and fail here if this torch cannot

    @property
    def config(self):
        return self.model.config

    def load_shortlist(self, folder: str | Path) -> Shortlist:
        """Decode with the vocabulary shortlist of a checkpoint folder (generation/shortlist.py, opt-in:
        faster output layer, outputs can differ); `translator.shortlist = None` turns it off again."""
        self.shortlist = Shortlist.load(folder, self.config.vocab_size)
        return self.shortlist

    def compile(self, cache_dir: str | Path | None = None, background: bool = False) -> NativeSearch:
        """Decode outside the interpreter: the whole search in C++ (compiled/native_search.py: seconds to build, then
        loaded from the cache), kept as `fast_search` and handed to every search it takes. The Python search decodes
        until it is ready, and for good where it cannot build (no C++ compiler, a CPU without AVX2 and FMA, a failed
        build: the reason is logged once and kept in its `.failure`). `background=True` builds in a thread and
        returns at once. With `quantize="int8"` the native search multiplies in int8. Returns the native search."""
        if self.fast_search is None:
            self.fast_search = NativeSearch(self.model, cache_dir, self.precision)
        if background:
            threading.Thread(target=self.fast_search.compile, name="compile-search", daemon=True).start()
        else:
            self.fast_search.compile()
        return self.fast_search

    # ----- text <-> ids -------------------------------------------------------------------

    def encode_source(self, text: str) -> tuple[list[int], bool]:
        """Source ids ending in EOS, cut to max_len; and whether anything was cut."""
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        limit = self.config.max_len - 1  # room for EOS
        truncated = len(ids) > limit
        return ids[:limit] + [self.config.eos_id], truncated

    def decode(self, ids: Sequence[int]) -> str:
        ids = [i for i in ids if i not in (self.config.pad_id, self.config.bos_id, self.config.eos_id)]
        return self.tokenizer.decode(ids).strip()

    def _max_new_tokens(self, src_len: int, max_new_tokens: int | None, prefix_ids: list[int] | None = None) -> int:
        if max_new_tokens is None:
            max_new_tokens = 2 * src_len + 10  # English runs about as long as German
            if prefix_ids:
                max_new_tokens = max(max_new_tokens, len(prefix_ids) + src_len + 10)  # room to go on after it
            return max(1, min(max_new_tokens, self.config.max_len))
        whole = isinstance(max_new_tokens, int) or (isinstance(max_new_tokens, float) and max_new_tokens.is_integer())
        if isinstance(max_new_tokens, bool) or not whole or max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be a whole number of at least 1, got {max_new_tokens!r}")
        return int(max_new_tokens)  # generate() names the problem when a prefix does not fit

    def encode_target(self, text: str, what: str = "the text") -> list[int]:
        """English text as target ids (no BOS/EOS), as written (a leading space starts a word); a
        ValueError when a character cannot be encoded (it would become <unk>)."""
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        if UNK_ID in ids:
            raise ValueError(f"{what} {text.strip()!r} has characters the tokenizer cannot encode (they became <unk>)")
        return ids

    def prefix_with_word(self, ids: Sequence[int], word: str) -> list[int]:
        """A forced prefix `ids` followed by a typed English `word`, spelled as it would be after them
        (with a space before it, unless it is punctuation or the first word)."""
        word = word.strip()
        return list(ids) + self.encode_target((" " if ids and word[:1].isalnum() else "") + word, "the word")

    def encode_prefix(self, prefix: str | Sequence[int] | None) -> list[int] | None:
        """A forced target prefix as token ids (no BOS/EOS); None or empty means no prefix."""
        if prefix is None:
            return None
        if isinstance(prefix, str):
            ids = self.encode_target(prefix.strip(), "prefix")
        elif isinstance(prefix, Sequence) and all(isinstance(i, int) and not isinstance(i, bool) for i in prefix):
            ids = list(cast(Sequence[int], prefix))  # every item checked an int
        else:
            raise TypeError(f"prefix must be English text or a list of token ids, got {type(prefix).__name__}")
        if len(ids) > self.config.max_len:
            raise ValueError(f"prefix of {len(ids)} tokens is longer than the model's max_len={self.config.max_len}")
        return ids or None

    # ----- translation --------------------------------------------------------------------

    def translate(
        self,
        text: str | Sequence[str],
        num_beams: int = 4,
        length_penalty: float = 1.0,
        max_new_tokens: int | None = None,
        batch_size: int = 64,
        prefix: str | Sequence[int] | None = None,
        head_mask: HeadMask | None = None,
    ) -> str | list[str]:
        """Translate one sentence (-> str) or a list (-> list[str], batched by length).

        `prefix` (English text or token ids without BOS) starts every translation; decoding
        continues freely after it. `head_mask` (model/heads.py) switches attention heads off.
        """
        prefix_ids = self.encode_prefix(prefix)
        single = isinstance(text, str)
        texts = [text] if single else list(text)
        outputs = [""] * len(texts)
        encoded = []
        for index, sentence in enumerate(texts):
            if not isinstance(sentence, str):
                raise TypeError(f"expected text, got {type(sentence).__name__}")
            if sentence.strip():
                ids, truncated = self.encode_source(sentence)
                if truncated:
                    warnings.warn(
                        f"input {index} is longer than {self.config.max_len} tokens; only its start was translated"
                    )
                encoded.append((index, ids))
        encoded.sort(key=lambda item: len(item[1]))  # similar lengths together: little padding
        step = self._sentences_per_search(batch_size, num_beams)
        for start in range(0, len(encoded), step):
            chunk = encoded[start : start + step]
            generated = self.generate_ids(
                [ids for _, ids in chunk], num_beams, length_penalty, max_new_tokens, prefix_ids, head_mask
            )
            for (index, _), ids in zip(chunk, generated):
                outputs[index] = self.decode(ids)
        return outputs[0] if single else outputs

    CPU_SEARCH_ROWS = 96  # sentences x beams decoded together on a CPU

    def _sentences_per_search(self, batch_size: int, num_beams: int) -> int:
        """Sentences per search: `batch_size`, but in fp32 on a CPU at most CPU_SEARCH_ROWS rows of beams.

        The key/value cache grows with rows x positions (16 KB a row and position); 24 sentences
        of 4 beams at a time peaked 43 MB lower than 64 (338 against 381 MB translating 128 val
        sentences) at about the same speed on 2 cores. int8 keeps the batches asked for: its
        activations share one scale per batch, and smaller batches moved it further from fp32."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        search = self.fast_search
        if self.device.type != "cpu" or self.precision != "fp32" or (search is not None and search.usable()):
            return batch_size  # the native search's cache is never copied: whole batches
        return max(1, min(batch_size, self.CPU_SEARCH_ROWS // max(num_beams, 1)))

    @torch.inference_mode()
    def generate_ids(
        self,
        sources: list[list[int]],
        num_beams: int,
        length_penalty: float,
        max_new_tokens: int | None,
        prefix_ids: list[int] | None = None,
        head_mask: HeadMask | None = None,
        observer: SearchObserver | None = None,
    ) -> list[list[int]]:
        """Encoded sources -> generated ids per sentence (right-padded), through `generation.generate`."""
        longest = max(len(ids) for ids in sources)
        src = torch.full((len(sources), longest), self.config.pad_id, dtype=torch.long)
        for row, ids in enumerate(sources):
            src[row, : len(ids)] = torch.tensor(ids)
        candidates = None
        if self.shortlist is not None:  # the batch's candidates, with EOS and any forced piece
            candidates = self.shortlist.candidates(sources, [self.config.eos_id] + list(prefix_ids or [])).to(
                self.device
            )
        out = generate(
            self.model,
            src.to(self.device),
            max_new_tokens=self._max_new_tokens(longest, max_new_tokens, prefix_ids),
            num_beams=num_beams,
            length_penalty=length_penalty,
            prefix=prefix_ids,
            head_mask=head_mask,
            observer=observer,
            precision=self.precision,
            shortlist=candidates,
            no_repeat_ngram=self.no_repeat_ngram,
            fast_search=self.fast_search,
        )
        return out.tolist()

    # ----- save / load / push ---------------------------------------------------------------

    def save_pretrained(self, save_directory: str | Path, card_info: dict | None = None) -> Path:
        """Write config.json, model.safetensors, tokenizer.json, README.md (the model card) and, with a decoding
        rule, decoding.json.

        `card_info` (training command, hardware, time, results) makes a new card; without it the
        card this checkpoint was loaded with is kept, or a card without results is written.
        """
        folder = Path(save_directory)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "README.md").unlink(missing_ok=True)  # the mixin would otherwise keep a stale card
        self.model.save_pretrained(folder)
        self.tokenizer.save(str(folder / "tokenizer.json"))
        if card_info is not None or self.model_card is None:
            self.model_card = render_model_card(self.model.config, self.model, card_info or {})
        (folder / "README.md").write_text(self.model_card, encoding="utf-8")
        if self.no_repeat_ngram:
            (folder / DECODING_FILE).write_text(
                json.dumps({"no_repeat_ngram": self.no_repeat_ngram}) + "\n", encoding="utf-8"
            )
        return folder

    @classmethod
    def from_pretrained(
        cls,
        model_id: str | Path,
        revision: str | None = None,
        device: str | torch.device | None = None,
        quantize: str | None = None,
        **hub_kwargs,
    ) -> Translator:
        """Model and tokenizer from one checkpoint folder or one revision of a Hub repo.

        The small files are read and checked against each other first, the weights last.
        `quantize="int8"`: decode with int8 weights on the CPU (see `Translator`).
        """
        device = pick_device(device)
        config_path = resolve_file(model_id, "config.json", revision=revision, **hub_kwargs)
        if not Path(str(model_id)).is_dir():
            # Pin the commit that config.json came from, so every file comes from the same one
            # even if the branch moves while we download (the cache stores files by commit).
            revision = config_path.parent.name
        config = TransformerConfig.from_json_file(config_path)
        tokenizer_path = resolve_file(model_id, "tokenizer.json", revision=revision, **hub_kwargs)
        try:
            tokenizer = load_tokenizer(tokenizer_path)
        except ValueError as err:
            raise CheckpointError(f"{err}; download or save the checkpoint again") from None
        check_tokenizer_fits(tokenizer, config, f"{tokenizer_path} (checked against {config_path})")
        # The config parsed above is the one the weights are checked against: each file is read once.
        weights_path = resolve_file(model_id, "model.safetensors", revision=revision, **hub_kwargs)
        model = load_checkpoint(Transformer, config, config_path, weights_path).to(device).eval()
        check_tokenizer_is_the_models(tokenizer, model, str(tokenizer_path))
        card = None
        try:
            card = read_card(resolve_file(model_id, "README.md", revision=revision, **hub_kwargs))
        except CheckpointError:
            pass  # a card is documentation; a checkpoint loads without one
        if device.type == "cpu" and quantize in (None, "", "fp32"):
            # This model is the translator's own (a model handed to Translator() keeps its layout):
            # generation steps read the decoder's matrices in place, no copies.
            store_decoder_transposed(model)
        translator = cls(model, tokenizer, device=device, model_card=card, quantize=quantize)
        translator.no_repeat_ngram = read_decoding_rule(model_id, revision, hub_kwargs)
        return translator

    def push_to_hub(
        self,
        repo_id: str,
        private: bool = False,
        branch: str | None = None,
        commit_message: str = "Upload Attention Lens checkpoint",
        token: str | None = None,
        card_info: dict | None = None,
    ) -> str:
        """Create the repo if needed and upload the four checkpoint files in one commit."""
        api = HfApi(token=token)
        repo_id = api.create_repo(repo_id=repo_id, private=private, exist_ok=True).repo_id
        if branch is not None:
            api.create_branch(repo_id=repo_id, branch=branch, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            folder = self.save_pretrained(Path(tmp) / "checkpoint", card_info=card_info)
            commit = api.upload_folder(
                repo_id=repo_id, folder_path=folder, commit_message=commit_message, revision=branch
            )
        return str(commit)


def padded(rows: list[list[int]], pad_id: int, device) -> torch.Tensor:
    """Rows of ids -> one (B, longest) tensor, padded with pad_id, on `device`."""
    batch = torch.full((len(rows), max(len(r) for r in rows)), pad_id, dtype=torch.long)
    for i, row in enumerate(rows):
        batch[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return batch.to(device)
