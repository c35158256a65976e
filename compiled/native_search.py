"""The whole search in C++: the encoder, then greedy or beam search, in one call that leaves the interpreter.

`NativeSearch.compile()` builds `compiled/native/engine.cpp` (its kernels in kernels.h, the model in
transformer.h, the searches in search.h) with the system's C++ compiler into a shared library, in a child
process, once: the library is named by a hash of its sources, the flags and the compiler, and later calls
load it from the cache (`~/.cache/attention-lens/compiled`, or `$ATTENTION_LENS_COMPILE_CACHE`). Loading
copies the model's weights into the engine, packed for its products: fp32, or int8 for the decoder
(`precision="int8"`: one scale per weight row, activations quantised per row on the fly, every product
int8: the encoder, the memory's keys and values and the output layer included).

The call goes through ctypes, which lets go of the interpreter lock while it runs. Translator.compile() keeps it
as `Translator.fast_search` and hands it to generation/search.py's generate(), which runs its own search where this
one does not apply: a head mask, an observer, a shortlist, the uncached reference, another precision or device (a
forced prefix it takes). Where no compiler is found, the CPU has no AVX2 and FMA, or the build fails, the reason is
kept in `failure`, logged once, and the Python search decodes (tests/test_native_search.py).

Shape legend: B sentences, S source length (padded), T' generated length.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import math
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import torch
from torch import Tensor, nn

from generation.step_weights import parameter_versions

log = logging.getLogger(__name__)
SOURCES = Path(__file__).resolve().parent / "native"
FLAGS = ["-O3", "-std=c++17", "-mavx2", "-mfma", "-shared", "-fPIC"]
BUILD_TIMEOUT_S = 300
DEFAULT_CACHE = Path.home() / ".cache" / "attention-lens" / "compiled"
_INT = ctypes.c_int
_INTS = ctypes.POINTER(ctypes.c_int)


def compiler() -> str | None:
    """The C++ compiler to build with: $CXX, else g++ or c++ on the PATH."""
    for name in (os.environ.get("CXX"), "g++", "c++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def library_name(cxx: str) -> str:
    """native-<hash>.so: a hash of the sources, the flags and the compiler's version."""
    digest = hashlib.sha256(" ".join(FLAGS).encode())
    for path in sorted(SOURCES.iterdir()):
        if path.suffix in (".cpp", ".h"):
            digest.update(path.name.encode() + path.read_bytes())
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
    digest.update(version.encode())
    return f"native-{digest.hexdigest()[:16]}.so"


def build(cache_dir: Path) -> Path:
    """The engine's shared library in cache_dir, built first where it is not there (a child process: the compiler)."""
    cxx = compiler()
    if cxx is None:
        raise RuntimeError("no C++ compiler found (g++ or c++): the native search needs one")
    target = cache_dir / library_name(cxx)
    if target.exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as work:
        partial = Path(work) / target.name
        done = subprocess.run(
            [cxx, *FLAGS, str(SOURCES / "engine.cpp"), "-o", str(partial)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise RuntimeError(f"building the native search failed: {last[:300]}")
        os.replace(partial, target)  # whole or not at all: another process may be loading it
    return target


def load(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    lib.al_supported.restype = _INT
    lib.al_model_new.restype = ctypes.c_void_p
    lib.al_model_new.argtypes = [_INTS, ctypes.c_float, ctypes.POINTER(ctypes.c_void_p), _INT]
    lib.al_model_free.argtypes = [ctypes.c_void_p]
    lib.al_bench_linear.restype = ctypes.c_double
    lib.al_bench_linear.argtypes = [ctypes.c_void_p, _INT, _INT, ctypes.c_void_p, _INT, _INT, _INT, ctypes.c_void_p]
    lib.al_translate.restype = _INT
    lib.al_translate.argtypes = [
        ctypes.c_void_p,
        _INTS,
        _INTS,
        _INT,
        _INT,
        ctypes.c_float,
        _INT,
        _INT,
        _INT,
        _INTS,
        _INT,
        _INTS,
    ]
    return lib


def product_microseconds(
    library: ctypes.CDLL, weight: Tensor, x: Tensor, int8: bool, repeats: int
) -> tuple[float, Tensor]:
    """The engine's product y = x W^T alone (bench/int8_shapes.py): the median microseconds of `repeats` calls, and y."""
    weight, x = weight.detach().float().contiguous(), x.detach().float().contiguous()
    y = torch.empty(x.size(0), weight.size(0))
    us = library.al_bench_linear(
        weight.data_ptr(), weight.size(0), weight.size(1), x.data_ptr(), x.size(0), int(int8), repeats, y.data_ptr()
    )
    if us < 0:
        raise ValueError(f"the engine's kernels take no ({weight.size(0)}, {weight.size(1)}) matrix")
    return us, y


def unsupported(model: nn.Module) -> str | None:
    """Why the engine cannot run this model, or None: it takes Post-LN models whose widths fit its kernels."""
    c = model.config
    if c.norm_first:
        return "the native search runs Post-LN models (norm_first=False)"
    if c.d_model % 16 or c.d_ff % 16 or (c.d_model // c.n_heads) % 8:
        return f"the native search needs d_model and d_ff multiples of 16 and d_k of 8 (got {c.d_model}, {c.d_ff})"
    if next(model.parameters()).device.type != "cpu":
        return "the native search runs on the CPU; this model is on another device"
    return None


def engine_tensors(model: nn.Module) -> list[Tensor]:
    """The weights in engine.cpp's order (al_model_new), each fp32 and contiguous."""

    def attention(a):
        return [a.in_proj.weight, a.in_proj.bias, a.out_proj.weight, a.out_proj.bias]

    def norm(n):
        return [n.weight, n.bias]

    def ff(f):
        return [f.linear1.weight, f.linear1.bias, f.linear2.weight, f.linear2.bias]

    tensors = []
    for layer in model.encoder_layers:
        tensors += attention(layer.self_attn)[:4] + norm(layer.norm1) + ff(layer.ff) + norm(layer.norm2)
    for layer in model.decoder_layers:
        tensors += attention(layer.self_attn) + attention(layer.cross_attn) + ff(layer.ff)
        tensors += norm(layer.norm1) + norm(layer.norm2) + norm(layer.norm3)
    tensors += [model.embed.weight, model.pos.pe[: model.config.max_len]]
    return [t.detach().float().contiguous() for t in tensors]


class NativeSearch:
    """The engine for one model, in one precision ("fp32" or "int8"). `ready` turns True once it is loaded;
    `failure` says why it is not (the Python search then decodes)."""

    def __init__(self, model: nn.Module, cache_dir: str | Path | None = None, precision: str = "fp32"):
        self.model, self.precision = model, precision
        self.cache_dir = Path(cache_dir or os.environ.get("ATTENTION_LENS_COMPILE_CACHE") or DEFAULT_CACHE)
        self.ready, self.failure, self.library = False, None, None
        self.calls = 0  # searches run by the engine
        self._lib, self._engine, self._versions, self._in_place = None, None, None, []
        self._lock = threading.Lock()

    def compile(self) -> bool:
        """Build or find the library and load the model into it (once). False, with `failure` set, where it cannot."""
        with self._lock:
            if self.ready or self.failure:
                return self.ready
            try:
                self._load()
            except Exception as error:  # no compiler, no AVX2, a failed build: the Python search decodes
                self.failure = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:300]}"
                log.warning("the native search is off (the Python search decodes): %s", self.failure)
                return False
            self.ready = True
            return True

    def _load(self) -> None:
        reason = unsupported(self.model)
        if reason:
            raise RuntimeError(reason)
        self.library = build(self.cache_dir)
        try:
            lib = load(self.library)
        except OSError as error:  # cut short, or from another machine: built again
            log.warning("the native search in %s does not load (%s); building it again", self.library, error)
            self.library.unlink(missing_ok=True)
            lib = load(build(self.cache_dir))
        if not lib.al_supported():
            raise RuntimeError("this CPU lacks AVX2 and FMA, which the native search's kernels use")
        c = self.model.config
        config = (_INT * 10)(
            c.vocab_size,
            c.d_model,
            c.n_heads,
            c.d_ff,
            c.max_len,
            c.pad_id,
            c.bos_id,
            c.eos_id,
            c.n_encoder_layers,
            c.n_decoder_layers,
        )
        self._versions = parameter_versions(self.model)
        tensors = engine_tensors(self.model)
        pointers = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
        eps = self.model.encoder_layers[0].norm1.eps
        self._in_place = tensors[-2:]  # the embedding and positional tables, read by the engine where they lie
        engine = lib.al_model_new(config, eps, pointers, 2 if self.precision == "int8" else 0)  # 2: every product int8
        if not engine:
            raise MemoryError("the native search could not hold the model's weights")
        self._lib, self._engine = lib, engine

    def usable(self) -> bool:
        """Loaded, and the weights are still those it copied."""
        return self.ready and self._versions == parameter_versions(self.model)

    def __call__(
        self,
        src: Tensor,
        num_beams: int,
        length_penalty: float,
        max_new_tokens: int,
        min_new_tokens: int = 0,
        no_repeat_ngram: int = 0,
        prefix: Tensor | None = None,
    ) -> Tensor:
        """src (B, S), right-padded -> (B, T') ids after BOS, up to and including EOS, right-padded: what
        generation/search.py's greedy and beam search return. `prefix` (P,): ids every output starts with. Anything
        the engine cannot take is refused here (ValueError, in words), never handed to the C++."""
        c = self.model.config
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (no_repeat_ngram, max_new_tokens)):
            if c.max_len >= no_repeat_ngram > max_new_tokens > 0:  # an n-gram longer than the output: no rule at all
                no_repeat_ngram = 0
        checked_call(c, src, num_beams, length_penalty, max_new_tokens, min_new_tokens, no_repeat_ngram, prefix)
        if not self.ready:
            raise ValueError("the native search is not loaded (call compile() first)")
        forced = torch.zeros(1, dtype=torch.int32) if prefix is None else prefix.to(torch.int32).contiguous()
        lengths = (src != c.pad_id).sum(dim=1).to(torch.int32)
        ids = src[src != c.pad_id].to(torch.int32).contiguous()  # the sentences end to end, no padding
        out = torch.empty(src.size(0), max_new_tokens, dtype=torch.int32)
        self.calls += 1
        status = self._lib.al_translate(
            self._engine,
            _pointer(ids),
            _pointer(lengths),
            src.size(0),
            num_beams,
            float(length_penalty),
            max_new_tokens,
            min_new_tokens,
            no_repeat_ngram,
            _pointer(forced),
            0 if prefix is None else forced.numel(),
            _pointer(out),
        )
        if status == -2:
            raise MemoryError(f"the native search ran out of memory translating {src.size(0)} sentences")
        if status != 0:
            raise ValueError(f"the native search refused its input (status {status})")
        out = out.long()
        width = int((out != c.pad_id).sum(dim=1).max()) if out.numel() else 0
        return out[:, :width]

    def __del__(self):
        if getattr(self, "_engine", None) and self._lib is not None:
            self._lib.al_model_free(self._engine)
            self._engine = None


MAX_BEAMS = 64  # the most beams one search keeps (the API allows 8)


def _whole(value, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return value


def checked_call(c, src, num_beams, length_penalty, max_new_tokens, min_new_tokens, no_repeat_ngram, prefix) -> None:
    """Refuse (ValueError naming the argument) what the engine cannot take: src must be (B, S) ids with B, S >= 1, in
    the vocabulary, each sentence a token first and right-padded; the counts in range; the prefix ordinary ids (no
    pad, BOS or EOS), no longer than max_new_tokens."""
    if not isinstance(src, Tensor) or src.dim() != 2 or src.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"src must be a 2-D tensor of token ids, got {getattr(src, 'shape', type(src).__name__)}")
    if src.size(0) < 1 or not 1 <= src.size(1) <= c.max_len:
        raise ValueError(
            f"src must hold at least one sentence of 1 to {c.max_len} tokens, got shape {tuple(src.shape)}"
        )
    if bool(((src < 0) | (src >= c.vocab_size)).any()):
        raise ValueError(f"src holds ids outside the vocabulary (0..{c.vocab_size - 1})")
    padded = src == c.pad_id
    if bool(padded[:, 0].any()) or bool((padded[:, :-1] & ~padded[:, 1:]).any()):
        raise ValueError("every sentence of src must start with a token and be padded on the right only")
    _whole(num_beams, "num_beams", 1, min(MAX_BEAMS, c.vocab_size // 2))
    if (
        isinstance(length_penalty, bool)
        or not isinstance(length_penalty, (int, float))
        or not math.isfinite(length_penalty)
    ):
        raise ValueError(f"length_penalty must be a finite number, got {length_penalty!r}")
    _whole(max_new_tokens, "max_new_tokens", 1, c.max_len)
    _whole(min_new_tokens, "min_new_tokens", 0, max_new_tokens)
    _whole(no_repeat_ngram, "no_repeat_ngram", 0, max_new_tokens)
    if prefix is not None:
        if not isinstance(prefix, Tensor) or prefix.dim() != 1 or prefix.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"prefix must be a 1-D tensor of token ids, got {getattr(prefix, 'shape', type(prefix).__name__)}"
            )
        if prefix.numel() > max_new_tokens:
            raise ValueError(f"prefix of {prefix.numel()} ids is longer than max_new_tokens={max_new_tokens}")
        special = {c.pad_id, c.bos_id, c.eos_id}
        bad = [i for i in prefix.tolist() if not 0 <= i < c.vocab_size or i in special]
        if bad:
            raise ValueError(
                f"prefix holds ids {bad[:5]} that are not ordinary tokens (0..{c.vocab_size - 1}, not pad/bos/eos)"
            )


def _pointer(t: Tensor):
    return ctypes.cast(t.data_ptr(), _INTS)
