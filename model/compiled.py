"""The decoder's one-token step compiled as one graph: every decoder layer with its cached self-attention
and precomputed cross-attention keys and values, and the output projection.

`torch.compile` (Inductor, its C++ wrapper, the weights frozen into the graph as constants, its own C++
GEMM kernels autotuned for these few-row products) turns the step into one C++ function: no Python
between the 19 matrix products, the norms and the attention, and the weights prepacked for the kernels. The shapes that change while translating (the
rows, the sentences, the source length, the positions cached) are symbolic, so nothing recompiles
while a sentence is decoded; warm-up compiles the few specializations (one row, one sentence, both
more than one) before the compiled path is used. Compiled code is cached on disk by Inductor in
`cache_dir` (default `~/.cache/attention-lens/compiled`, or `$ATTENTION_LENS_COMPILE_CACHE`).

Where no C++ compiler is present or compilation fails, the reason is logged once and decoding stays on
the eager path (model/step.py): same tokens either way (tests/test_compiled.py). The compiled step
gives logits only: a search that wants attention rows (lens/trace.py) or switches heads off runs
eager, and explain()'s maps always come from the exact teacher-forced pass.

Shape legend: L decoder layers, N rows (B sentences x K beams), H heads, C positions cached, S source
length, d_k head width, D model width, V vocabulary.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import threading
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

log = logging.getLogger(__name__)
DEFAULT_CACHE = Path.home() / ".cache" / "attention-lens" / "compiled"
GROW_STEPS = 16  # the cache buffers grow by this many positions when full, as KVCache does
MAX_ROWS = 16  # searches of more rows stay eager: past ~16 rows the BLAS calls of the eager step win


class Linear(nn.Module):
    """x W^T + b with W in fp32, or weight-only int8 (one scale per output row, dequantized in the product:
    the pattern Inductor turns into its int8 kernels)."""

    def __init__(self, weight: Tensor, bias: Tensor | None, int8: bool):
        super().__init__()
        weight = weight.detach()
        self.int8 = int8
        if int8:
            scale = (weight.float().abs().amax(dim=1) / 127.0).clamp_min(1e-8)  # (out,)
            self.register_buffer("weight", torch.round(weight / scale[:, None]).to(torch.int8))
            self.register_buffer("scale", scale.to(weight.dtype))
        else:
            self.register_buffer("weight", weight)
        self.register_buffer("bias", None if bias is None else bias.detach())

    def forward(self, x: Tensor) -> Tensor:
        if not self.int8:
            return F.linear(x, self.weight, self.bias)
        out = F.linear(x, self.weight.to(x.dtype)) * self.scale
        return out if self.bias is None else out + self.bias


class StepLayer(nn.Module):
    """One decoder layer's matrices for the compiled step (the cross-attention's W_Q rows alone), and its norms."""

    def __init__(self, layer: nn.Module, int8: bool):
        super().__init__()
        D = layer.self_attn.d_model
        sa, ca = layer.self_attn, layer.cross_attn
        self.qkv = Linear(sa.in_proj.weight, sa.in_proj.bias, int8)
        self.self_out = Linear(sa.out_proj.weight, sa.out_proj.bias, int8)
        self.cross_q = Linear(ca.in_proj.weight[:D], ca.in_proj.bias[:D], int8)
        self.cross_out = Linear(ca.out_proj.weight, ca.out_proj.bias, int8)
        self.w1 = Linear(layer.ff.linear1.weight, layer.ff.linear1.bias, int8)
        self.w2 = Linear(layer.ff.linear2.weight, layer.ff.linear2.bias, int8)
        self.norms = nn.ModuleList([layer.norm1, layer.norm2, layer.norm3])
        self.norm_first, self.n_heads = layer.norm_first, sa.n_heads

    def residual(self, x: Tensor, i: int, sublayer) -> Tensor:
        """Post-LN norm(x + f(x)) as in the paper, or Pre-LN x + f(norm(x)) (model/layers.py's ResidualLayer)."""
        norm = self.norms[i]
        return x + sublayer(norm(x)) if self.norm_first else norm(x + sublayer(x))

    def self_attention(self, h: Tensor, position: Tensor, keys: Tensor, values: Tensor, past: Tensor) -> Tensor:
        """The newest token h (N, D) over itself and the cached ones (`past` (1, 1, 1, C) masks the rest); its key
        and value are written in at `position`."""
        (N, D), H = h.shape, self.n_heads
        q, k, v = self.qkv(h).view(N, 3, H, D // H).unbind(1)  # (N, H, d_k) each
        keys.index_copy_(2, position, k[:, :, None])
        values.index_copy_(2, position, v[:, :, None])
        out = F.scaled_dot_product_attention(q[:, :, None], keys, values, attn_mask=past)
        return self.self_out(out.reshape(N, D))

    def cross_attention(self, h: Tensor, memory_keys: Tensor, memory_values: Tensor, source_bias: Tensor,
                        B: int) -> Tensor:
        """h (N, D) of K = N / B beams per sentence over its sentence's memory (B, H, S, d_k), as K queries."""
        (N, D), H = h.shape, self.n_heads
        q = self.cross_q(h).view(B, N // B, H, D // H).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, memory_keys, memory_values, attn_mask=source_bias)  # (B, H, K, d_k)
        return self.cross_out(out.transpose(1, 2).reshape(N, D))


class StepGraph(nn.Module):
    """One decoder step as a function of tensors only: the thing that is compiled."""

    def __init__(self, model: nn.Module, precision: str = "fp32"):
        super().__init__()
        int8 = precision == "int8"
        self.embed, self.pe, self.scale = model.embed, model.pos.pe, math.sqrt(model.config.d_model)
        self.layers = nn.ModuleList(StepLayer(layer, int8) for layer in model.decoder_layers)
        self.decoder_norm = model.decoder_norm
        self.lm_head = Linear(model.lm_head.weight, model.lm_head.bias, int8)

    def forward(self, tokens: Tensor, position: Tensor, keys: Tensor, values: Tensor, memory_keys: Tensor,
                memory_values: Tensor, source_bias: Tensor) -> Tensor:
        """tokens (N,) at `position` (a (1,) tensor: an int would be compiled in) -> logits (N, V).
        keys, values (L, N, H, C, d_k): this step's are written at `position`, the positions after it are
        masked; memory_keys, memory_values (L, B, H, S, d_k); source_bias (B, 1, 1, S)."""
        B = memory_keys.size(1)
        x = self.embed(tokens) * self.scale + self.pe.index_select(0, position)  # (N, D)
        seen = torch.arange(keys.size(3), device=keys.device) <= position  # (C,): this step and the ones before
        past = torch.zeros(seen.shape, dtype=x.dtype, device=x.device).masked_fill(~seen, float("-inf")).view(1, 1, 1, -1)
        for i, layer in enumerate(self.layers):
            x = layer.residual(x, 0, lambda h: layer.self_attention(h, position, keys[i], values[i], past))
            x = layer.residual(x, 1, lambda h: layer.cross_attention(h, memory_keys[i], memory_values[i], source_bias, B))
            x = layer.residual(x, 2, lambda h: layer.w2(F.relu(layer.w1(h))))
        return self.lm_head(self.decoder_norm(x))


class CompiledStep:
    """The compiled step of one model: compiled (and warmed up) once, then called by CompiledDecoder.

    `ready` turns True when every specialization has compiled; until then, and for good after a
    failure (`failure` says why), decoding uses the eager path.
    """

    def __init__(self, model: nn.Module, cache_dir: str | Path | None = None, precision: str = "fp32"):
        self.model, self.precision = model, precision  # "int8": weight-only int8 matrices in the graph
        self.cache_dir = Path(cache_dir or os.environ.get("ATTENTION_LENS_COMPILE_CACHE") or DEFAULT_CACHE)
        self.ready = False
        self.failure: str | None = None
        self.seconds: float | None = None  # how long compiling and warming up took
        self.calls = 0  # searches decoded with it
        self._versions = None
        self._fn = None
        self._lock = threading.Lock()

    def usable(self) -> bool:
        """Compiled, and the weights are still those it froze."""
        return self.ready and self._versions == versions(self.model)

    def compile(self) -> bool:
        """Compile and warm up (once; later calls return at once). False, with `failure` set, where it cannot."""
        with self._lock:
            if self.ready or self.failure:
                return self.ready
            start = time.perf_counter()
            try:
                self._compile()
            except Exception as error:  # no compiler, an unsupported op: the eager path stays
                self.failure = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:300]}"
                log.warning("the compiled decoder step is off (decoding stays eager): %s", self.failure)
                return False
            self.seconds = time.perf_counter() - start
            self.ready = True
            return True

    def _compile(self) -> None:
        if shutil.which(os.environ.get("CXX", "g++")) is None and shutil.which("c++") is None:
            raise RuntimeError("no C++ compiler found (g++ or c++): Inductor needs one on the CPU")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(self.cache_dir))
        import torch._inductor.config as inductor

        self._versions = versions(self.model)
        graph = StepGraph(self.model, self.precision).eval()
        # Inference mode, as generation runs: a tensor made outside it would be compiled for another dispatch.
        # max_autotune with the CPP backend: Inductor's own C++ GEMM kernels, tuned to these few-row products
        # and the prepacked weights; on this CPU they beat the BLAS calls of the eager step 1.4-2x.
        settings = dict(cpp_wrapper=True, freezing=True, max_autotune=True, max_autotune_gemm_backends="CPP,ATEN",
                        autotune_num_choices_displayed=0, max_autotune_report_choices_stats=False)  # a quiet log
        with inductor.patch(**settings), torch.inference_mode():
            self._fn = torch.compile(graph.forward, fullgraph=True, dynamic=True)  # the function: no module hooks
            for sentences, beams in ((1, 1), (1, 4), (3, 1), (3, 4)):  # every specialization of rows and sentences
                self.warm_up(sentences, beams)

    def give_up(self, reason: str) -> None:
        """A call needed a new compilation: the eager path from now on, said once."""
        with self._lock:
            if self.ready:
                self.ready, self.failure = False, reason
                log.warning("the compiled decoder step is off from now on (decoding stays eager): %s", reason)

    def warm_up(self, sentences: int, beams: int) -> None:
        """One call on made-up inputs of this many sentences and beams, so it compiles now."""
        c, p = self.model.config, next(self.model.parameters())
        N, L = sentences * beams, c.n_decoder_layers
        keys = p.new_zeros(L, N, c.n_heads, GROW_STEPS, c.d_k)
        memory = p.new_zeros(L, sentences, c.n_heads, 7, c.d_k)
        position = torch.tensor([2], device=p.device)
        self._fn(torch.full((N,), c.bos_id, device=p.device), position, keys, keys.clone(), memory, memory.clone(),
                 p.new_zeros(sentences, 1, 1, 7))

    def __call__(self, *args) -> Tensor:
        # Once warm, only the guards that tell the specializations apart run (the shapes and dtypes
        # a search passes are the ones warm-up compiled): a third of the step's time otherwise.
        with torch.inference_mode(), torch.compiler.set_stance("default", skip_guard_eval_unsafe=True):
            return self._fn(*args)


def versions(model: nn.Module) -> tuple:
    """What the frozen weights were compiled from: changed by training, load_state_dict or .to()."""
    return tuple((p.data_ptr(), p._version) for p in model.parameters())


class CompiledDecoder:
    """model/step.py's StepDecoder on the compiled step: the cache is one (L, N, H, C, d_k) pair of buffers."""

    def __init__(self, step: CompiledStep, memory: Tensor, src_mask: Tensor, num_beams: int, capacity: int):
        """memory (B, S, D), src_mask (B, 1, 1, S) bool: one entry per sentence, not per beam."""
        model, c = step.model, step.model.config
        self.step, self.capacity = step, capacity
        step.calls += 1
        kv = model.memory_kv(memory)  # per layer, (B, H, S, d_k) each
        self.memory_keys = torch.stack([k for k, _ in kv])  # (L, B, H, S, d_k)
        self.memory_values = torch.stack([v for _, v in kv])
        self.source_bias = torch.zeros(src_mask.shape, dtype=memory.dtype, device=memory.device)
        self.source_bias.masked_fill_(~src_mask, float("-inf"))  # (B, 1, 1, S)
        self.memory, self.src_mask, self.eager = memory, src_mask, None  # kept for a fallback (_replayed)
        rows = memory.size(0) * num_beams
        self.keys = memory.new_zeros(c.n_decoder_layers, rows, c.n_heads, min(capacity, GROW_STEPS), c.d_k)
        self.values = torch.zeros_like(self.keys)
        self.length = 0
        self.positions = torch.arange(capacity, device=memory.device)  # position t as a (1,) tensor: a slice

    def __call__(self, tokens: Tensor, need_weights: bool = False) -> tuple[Tensor, None]:
        if need_weights:
            raise ValueError("the compiled step gives logits only: ask the eager decoder for attention rows")
        if self.eager is None:
            try:
                return self._compiled(tokens), None
            except RuntimeError as error:  # inputs warm-up did not compile for (another thread count, say)
                self.step.give_up(f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}")
                self.eager = self._replayed(tokens)
        return self.eager(tokens)

    def _replayed(self, tokens: Tensor):
        """An eager decoder whose cache holds the steps before the last of `tokens` (N, t)."""
        from .step import CachedDecoder

        eager = CachedDecoder(self.step.model, self.memory, self.src_mask, tokens.size(0) // self.memory.size(0),
                              self.capacity)
        for t in range(1, tokens.size(1)):
            eager(tokens[:, :t])
        return eager

    def _compiled(self, tokens: Tensor) -> Tensor:
        position = tokens.size(1) - 1
        if position >= self.keys.size(3):
            self._grow(min(self.capacity, self.keys.size(3) + GROW_STEPS))
        newest = torch.empty_like(tokens[:, -1], memory_format=torch.contiguous_format).copy_(tokens[:, -1])  # stride 1
        logits = self.step(newest, self.positions[position : position + 1], self.keys, self.values, self.memory_keys,
                           self.memory_values, self.source_bias)
        self.length = position + 1
        return logits

    def _grow(self, allocated: int) -> None:
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = old.new_zeros(*old.shape[:3], allocated, old.size(4))
            new[:, :, :, : self.length] = old[:, :, :, : self.length]
            setattr(self, name, new)

    def reorder(self, rows: Tensor, sentences: Tensor | None = None) -> None:
        if sentences is not None:
            self.memory, self.src_mask = self.memory[sentences], self.src_mask[sentences]
        if self.eager is not None:
            self.eager.reorder(rows, sentences)
            return
        n = self.length
        for name in ("keys", "values"):
            old = getattr(self, name)
            kept = old[:, rows, :, :n]  # (L, N', H, n, d_k), a copy
            if rows.numel() == old.size(1):
                old[:, :, :, :n] = kept  # as many rows: in place
            else:
                new = old.new_zeros(old.size(0), rows.numel(), *old.shape[2:])
                new[:, :, :, :n] = kept
                setattr(self, name, new)
        if sentences is not None:
            self.memory_keys = self.memory_keys[:, sentences]
            self.memory_values = self.memory_values[:, sentences]
            self.source_bias = self.source_bias[sentences]
