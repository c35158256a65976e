"""Greedy and beam search over a step decoder, with or without the key/value cache.

Shape legend: B batch, K beams, N = B * K decoder rows, n sentences still searching, S source
length, t steps decoded so far, V vocabulary. Both searches return (B, T') ids: the tokens after
BOS, up to and including EOS, right-padded with pad_id. The cache changes the cost, never the
tokens: the uncached decoder re-runs the full decoder over the prefix at every step and is kept
to prove it. A forced prefix fixes the first tokens; a SearchObserver sees every step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from model.attention import padding_mask
from model.heads import HeadMask
from model.transformer import Transformer

from .bans import Banned
from .step import CachedDecoder, StepAttention, StepDecoder, UncachedDecoder
from .step_linear import check_precision


class SearchObserver(Protocol):
    """Sees what a search does at every step, for one sentence (lens/trace.py records a trace)."""

    wants_attention: bool  # True: every step also returns its attention rows (slower)

    def on_step(self, step: int, log_probs: Tensor, attention: StepAttention | None) -> None:
        """The model's log-probabilities (N, V) for every live row, before any ban or forcing."""

    def on_beams(self, step: int, parents: Tensor, tokens: Tensor, scores: Tensor) -> None:
        """The rows kept for the next step: each one's parent row, new token, cumulative log-prob (K,)."""

    def on_finished(self, step: int, parents: Tensor, scores: Tensor, normalised: Tensor, ended: bool) -> None:
        """Hypotheses offered to the finished list: parent row, cumulative log-prob, length-penalised
        score (m,); `ended` False when the steps ran out and live beams are taken as they are."""


@dataclass
class SearchOptions:
    """What both searches take besides the model and the source."""

    max_new_tokens: int = 64
    min_new_tokens: int = 0
    use_cache: bool = True
    prefix: Sequence[int] | Tensor | None = None  # ids every output starts with (no BOS)
    head_mask: HeadMask | None = None
    observer: SearchObserver | None = None
    precision: str = "fp32"  # "int8": the cached decoder multiplies by int8 weights (opt-in, approximate)
    shortlist: Tensor | None = (
        None  # sorted candidate ids: the output layer multiplies only these rows (generation/shortlist.py)
    )
    no_repeat_ngram: int = (
        0  # n > 0: no n pieces in a row are written twice (the last n - 1, then a piece that followed them)
    )


@torch.inference_mode()
def generate(
    model: Transformer,
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
    fast_search: FastSearch | None = None,
) -> Tensor:
    """Translate src (B, S) -> (B, T') ids after BOS, up to and including EOS, right-padded.

    Greedy when num_beams == 1, beam search otherwise. `prefix`: token ids (without BOS) every output
    starts with; decoding is free after them. `observer` sees every step of the search (lens/trace.py
    records a trace with it). `precision` "int8" decodes with int8 weights on the CPU (faster,
    approximate; generation/step_linear.py). `shortlist`: sorted candidate ids; the output layer
    multiplies only those rows (generation/shortlist.py). `no_repeat_ngram` n > 0: no n consecutive
    pieces are written twice in one output. `fast_search`: a whole search outside the interpreter (a Translator's
    `fast_search`), which runs the searches it takes; the others run here.
    """
    check_precision(precision)
    check_source(src, model.config)
    options = SearchOptions(
        max_new_tokens=max_new_tokens,
        min_new_tokens=min_new_tokens,
        use_cache=use_cache,
        prefix=prefix,
        head_mask=model.checked_head_mask(head_mask),
        observer=observer,
        precision=precision,
        shortlist=shortlist,
        no_repeat_ngram=no_repeat_ngram,
    )
    native = _native_search(fast_search, model, src, options, num_beams)
    if native is not None:
        max_new = min(options.max_new_tokens, model.config.max_len)
        forced = _forced_prefix(options.prefix, model.config, max_new, src.device)
        return native(src, num_beams, length_penalty, max_new, options.min_new_tokens, options.no_repeat_ngram, forced)
    was_training = model.training
    if was_training:
        model.eval()  # generation never drops out (walking the modules costs a millisecond: only when needed)
    try:
        if num_beams == 1:
            return greedy_search(model, src, options)
        return beam_search(model, src, num_beams, length_penalty, options)
    finally:
        if was_training:
            model.train()


def check_source(src: Tensor, config) -> None:
    """Refuse (ValueError, in words) a source no search should see, before any of them runs: the native search
    would crash on it, the Python one give nonsense. src must be (B, S) token ids with B, S >= 1, every id in
    the vocabulary, every sentence starting with a token and right-padded."""
    if not isinstance(src, Tensor) or src.dim() != 2 or src.dtype not in (torch.int64, torch.int32):
        raise ValueError(
            f"src must be a 2-D tensor of token ids (sentences, tokens), got "
            f"{tuple(src.shape) if isinstance(src, Tensor) else type(src).__name__}"
            f"{' of ' + str(src.dtype) if isinstance(src, Tensor) else ''}"
        )
    if src.size(0) < 1 or src.size(1) < 1:
        raise ValueError(
            f"src holds no sentence to translate (shape {tuple(src.shape)}): give at least one sentence "
            "of at least one token"
        )
    if bool(((src < 0) | (src >= config.vocab_size)).any()):
        raise ValueError(f"src holds ids outside the vocabulary (0..{config.vocab_size - 1})")
    if bool((src[:, 0] == config.pad_id).any()):
        first = int((src[:, 0] == config.pad_id).nonzero()[0, 0])
        raise ValueError(
            f"sentence {first} of src starts with padding: every sentence needs a token first (right-padded)"
        )


def _start(
    model: Transformer, src: Tensor, options: SearchOptions, num_beams: int
) -> tuple[StepDecoder, int, Tensor | None]:
    """Encode the source once; return the step decoder for N = B * num_beams rows, the step count
    and the forced prefix (P,) or None."""
    config = model.config
    if options.max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {options.max_new_tokens}")
    if src.size(1) > config.max_len:
        raise ValueError(f"source of {src.size(1)} tokens is longer than max_len={config.max_len}")
    if options.observer is not None and src.size(0) != 1:
        raise ValueError(f"an observer follows one sentence; got a batch of {src.size(0)}")
    # The decoder sees BOS plus all but the last new token: max_new_tokens positions in all.
    max_new_tokens = min(options.max_new_tokens, config.max_len)
    forced = _forced_prefix(options.prefix, config, max_new_tokens, src.device)
    # The encoder stays fp32 under int8 decoding: it runs once a sentence, and in int8 it cost
    # agreement with fp32 (903 against 917 of 1,014 val beam translations) for little speed.
    src_mask = padding_mask(src, config.pad_id)  # (B, 1, 1, S)
    memory, _ = model.encode(src, src_mask, head_mask=options.head_mask)  # (B, S, D)
    if options.shortlist is not None and not options.use_cache:
        raise ValueError("a shortlist is for the cached decoder: use_cache=True")
    decoder_cls = CachedDecoder if options.use_cache else UncachedDecoder
    decoder = decoder_cls(
        model,
        memory,
        src_mask,
        num_beams,
        capacity=max_new_tokens,
        head_mask=options.head_mask,
        precision=options.precision,
    )
    if options.shortlist is not None:
        assert isinstance(decoder, CachedDecoder)  # use_cache, as checked above
        decoder.shortlist(options.shortlist)
    return decoder, max_new_tokens, forced


class FastSearch(Protocol):
    """A whole search outside the interpreter: compiled/native_search.py's NativeSearch, which Translator.compile()
    builds and keeps as `Translator.fast_search`. generate() hands it the searches it takes, and imports nothing of it."""

    precision: str

    def usable(self) -> bool:
        """Ready, and built from the model's current weights."""

    def __call__(
        self,
        src: Tensor,
        num_beams: int,
        length_penalty: float,
        max_new_tokens: int,
        min_new_tokens: int,
        no_repeat_ngram: int,
        prefix: Tensor | None,
    ) -> Tensor:
        """src (B, S) -> (B, T') ids, as greedy_search and beam_search return them."""


def _native_search(
    search: FastSearch | None, model: Transformer, src: Tensor, options: SearchOptions, num_beams: int
) -> FastSearch | None:
    """`search`, where it is ready and the search asks for nothing it lacks (maps, head masks, a shortlist, the
    uncached reference), for an input the Python search would take; else None."""
    if search is None or not search.usable() or src.device.type != "cpu" or src.numel() == 0:
        return None
    config = model.config
    takes = (
        options.use_cache
        and options.precision == search.precision
        and options.head_mask is None
        and options.shortlist is None
        and options.observer is None
        and options.max_new_tokens >= 1
        and src.size(1) <= config.max_len
        and 1 <= num_beams
        and 2 * num_beams <= config.vocab_size
    )
    return search if takes and bool((src[:, 0] != config.pad_id).all()) else None


def _forced_prefix(prefix, config, max_new_tokens: int, device: torch.device) -> Tensor | None:
    """The prefix as a (P,) long tensor, after checking it can be decoded at all."""
    if prefix is None:
        return None
    ids = prefix.tolist() if isinstance(prefix, Tensor) else list(prefix)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ValueError("prefix must be a list of token ids (int)")
    special = {config.pad_id, config.bos_id, config.eos_id}
    bad = [i for i in ids if not 0 <= i < config.vocab_size or i in special]
    if bad:
        raise ValueError(
            f"prefix holds ids {bad[:5]} that are not ordinary tokens of the vocabulary "
            f"(0..{config.vocab_size - 1}, not pad/bos/eos)"
        )
    if len(ids) > max_new_tokens:
        raise ValueError(
            f"prefix of {len(ids)} tokens is longer than the {max_new_tokens} new tokens allowed "
            f"(max_new_tokens, at most max_len={config.max_len}): shorten it"
        )
    return torch.tensor(ids, dtype=torch.long, device=device) if ids else None


def _force(log_probs: Tensor, token: Tensor) -> Tensor:
    """Only `token` stays possible, with the log-probability the model gave it."""
    kept = log_probs[:, token].clone()  # (N,)
    log_probs.fill_(float("-inf"))
    log_probs[:, token] = kept
    return log_probs


def _next_logits(decoder: StepDecoder, tokens: Tensor, step: int, observer: SearchObserver | None) -> Tensor:
    """One decoder step; the observer sees the model's own distribution before any ban."""
    if observer is None:
        return decoder(tokens)[0]
    logits, attention = decoder(tokens, need_weights=observer.wants_attention)
    observer.on_step(step, logits.float().log_softmax(dim=-1), attention)
    return logits


def _trim(ids: Tensor, pad_id: int) -> Tensor:
    """Drop the columns that are padding in every row."""
    lengths = (ids != pad_id).sum(dim=1)
    return ids[:, : int(lengths.max()) if lengths.numel() else 0]


def greedy_search(model: Transformer, src: Tensor, options: SearchOptions) -> Tensor:
    """Pick the most likely next token at every step until every sentence has produced EOS."""
    config, observer = model.config, options.observer
    decoder, max_new_tokens, forced = _start(model, src, options, 1)
    never_generate = Banned(config, options.min_new_tokens, src.device, options.no_repeat_ngram)
    B = src.size(0)
    tokens = torch.full((B, 1), config.bos_id, dtype=torch.long, device=src.device)  # (B, 1)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    score = torch.zeros(B, device=src.device)  # cumulative log-prob, for the observer
    for t in range(max_new_tokens):
        is_forced = forced is not None and t < forced.numel()  # a forced piece is never banned
        logits = never_generate(_next_logits(decoder, tokens, t, observer), t, None if is_forced else tokens)
        next_token = forced[t].expand(B) if forced is not None and t < forced.numel() else logits.argmax(dim=-1)
        next_token = next_token.masked_fill(finished, config.pad_id)  # (B,)
        if observer is not None:
            score = score + logits.float().log_softmax(dim=-1).gather(1, next_token[:, None])[:, 0]
            observer.on_beams(t, torch.arange(B, device=src.device), next_token, score)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)  # (B, t+1)
        finished |= next_token == config.eos_id
        if bool(finished.all()):
            break
    return tokens[:, 1:]


@dataclass
class _FinishedHypotheses:
    """The K best finished hypotheses of every sentence, best first, with their scores."""

    scores: Tensor  # (B, K) length-penalised, -inf where empty
    ids: Tensor  # (B, K, max_new_tokens)
    some_full: bool = False  # a sentence holds K: only then can one be done (_advance)

    def add(self, sentences: Tensor, ids: Tensor, scores: Tensor) -> None:
        """Merge new hypotheses ids (n, m, max_new), scores (n, m) into the K best of each sentence."""
        K, width = self.scores.size(1), self.ids.size(2)
        all_scores = torch.cat([self.scores[sentences], scores], dim=1)  # (n, K+m)
        all_ids = torch.cat([self.ids[sentences], ids], dim=1)  # (n, K+m, max_new)
        best, pick = all_scores.topk(K, dim=1)  # (n, K)
        self.scores[sentences] = best
        self.ids[sentences] = all_ids.gather(1, pick[:, :, None].expand(-1, -1, width))
        self.some_full = self.some_full or bool((best[:, -1] > float("-inf")).any())


@dataclass
class _Candidates:
    """The 2K best one-token extensions of each sentence's beams (n, 2K): at least K do not end."""

    scores: Tensor  # cumulative log-prob
    from_beam: Tensor  # which of the sentence's K beams each extends
    token: Tensor
    ends: Tensor  # token is EOS


def _candidates(row_top: Tensor, row_tokens: Tensor, beam_scores: Tensor, K: int, eos_id: int) -> _Candidates:
    """score(beam + token) = beam score + log p(token), from each row's 2K best tokens: their log-probs
    row_top and ids row_tokens (n*K, 2K), best first, and beam_scores (n, K)."""
    n = beam_scores.size(0)
    # The 2K best of a sentence are among the 2K best tokens of each of its beams (_ranked): start
    # from those and never materialise all K x V sums.
    row_scores = row_top + beam_scores.view(n * K, 1)
    scores, top_ids = row_scores.view(n, K * 2 * K).topk(2 * K, dim=1)  # (n, 2K)
    token = row_tokens.reshape(n, K * 2 * K).gather(1, top_ids)  # (n, 2K)
    return _Candidates(scores=scores, from_beam=top_ids // (2 * K), token=token, ends=token == eos_id)


def _ranked(
    decoder: StepDecoder,
    tokens: Tensor,
    t: int,
    never_generate: Banned,
    forced: Tensor | None,
    observer: SearchObserver | None,
    k: int,
) -> tuple[Tensor, Tensor]:
    """The k most likely next tokens of every row (N, k) after the bans and any forcing, best first: their
    log-probabilities and ids."""
    is_forced = forced is not None and t < forced.numel()  # a forced piece is never banned
    logits = never_generate(_next_logits(decoder, tokens, t, observer), t, None if is_forced else tokens)
    log_probs = logits.float().log_softmax(dim=-1)  # (N, V)
    if is_forced:
        assert forced is not None  # is_forced says so
        log_probs = _force(log_probs, forced[t])
    return log_probs.topk(k, dim=1)


def _finish_ended(
    cand: _Candidates,
    tokens: Tensor,
    active: Tensor,
    finished: _FinishedHypotheses,
    t: int,
    length_penalty: float,
    config,
    observer: SearchObserver | None,
) -> None:
    """EOS among a sentence's K best candidates ends a hypothesis: offer it to the finished list."""
    n, K = cand.scores.size(0), cand.scores.size(1) // 2
    ends = cand.ends[:, :K]  # (n, K)
    if not bool(ends.any()):
        return
    normalised = torch.where(ends, cand.scores[:, :K] / float(t + 1) ** length_penalty, float("-inf"))  # (n, K)
    prefix = tokens[:, 1:].view(n, K, t)  # (n, K, t)
    ids = torch.full((n, K, finished.ids.size(2)), config.pad_id, dtype=torch.long, device=tokens.device)
    ids[:, :, :t] = prefix.gather(1, cand.from_beam[:, :K, None].expand(-1, -1, t))
    ids[:, :, t] = config.eos_id
    finished.add(active, ids, normalised)
    if observer is not None:
        real = ends[0] & (cand.scores[0, :K] > float("-inf"))
        observer.on_finished(t, cand.from_beam[0, :K][real], cand.scores[0, :K][real], normalised[0][real], True)


def beam_search(
    model: Transformer, src: Tensor, num_beams: int, length_penalty: float, options: SearchOptions
) -> Tensor:
    """Keep the K best prefixes of every sentence; return the best finished one.

    A finished hypothesis scores sum(log p) / length ** length_penalty. A sentence stops once it
    has K finished hypotheses and its best live prefix, normalised at the current length, cannot
    beat the worst of them; it then leaves the batch, so the others decode faster.
    """
    config, K, observer = model.config, num_beams, options.observer
    if K < 1 or 2 * K > config.vocab_size:
        raise ValueError(f"num_beams must be between 1 and vocab_size / 2, got {K}")
    decoder, max_new_tokens, forced = _start(model, src, options, K)
    never_generate = Banned(config, options.min_new_tokens, src.device, options.no_repeat_ngram)
    B, device = src.size(0), src.device
    tokens = torch.full((B * K, 1), config.bos_id, dtype=torch.long, device=device)  # (N, 1)
    # All beams start as the same BOS prefix; only the first is live, or step one would pick
    # the same K tokens K times over.
    beam_scores = torch.full((B, K), float("-inf"), device=device)
    beam_scores[:, 0] = 0.0
    finished = _FinishedHypotheses(
        scores=torch.full((B, K), float("-inf"), device=device),
        ids=torch.full((B, K, max_new_tokens), config.pad_id, dtype=torch.long, device=device),
    )
    active = torch.arange(B, device=device)  # sentences still searching, as indices into B
    for t in range(max_new_tokens):
        cand = _candidates(
            *_ranked(decoder, tokens, t, never_generate, forced, observer, 2 * K), beam_scores, K, config.eos_id
        )
        _finish_ended(cand, tokens, active, finished, t, length_penalty, config, observer)
        tokens, beam_scores, active, kept, rows = _advance(
            cand, tokens, active, finished, t, length_penalty, config, observer
        )
        if active.numel() == 0:
            break
        decoder.reorder(rows, kept)
    if active.numel() > 0:
        _out_of_steps(tokens, beam_scores, active, finished, length_penalty, config.pad_id, observer)
    return _trim(finished.ids[:, 0], config.pad_id)


def _advance(
    cand: _Candidates,
    tokens: Tensor,
    active: Tensor,
    finished: _FinishedHypotheses,
    t: int,
    length_penalty: float,
    config,
    observer: SearchObserver | None,
):
    """The K best candidates that do not end become the next beams; sentences that are done leave.

    Returns the new tokens (n'*K, t+2), beam scores (n', K), active sentences (n',), the kept
    positions of the sentences that go on (None if all do) and the decoder rows to keep (n'*K,).
    """
    n, K = cand.scores.size(0), cand.scores.size(1) // 2
    live_scores = cand.scores.masked_fill(cand.ends, float("-inf"))
    beam_scores, pick = live_scores.topk(K, dim=1)  # (n, K)
    rows = torch.arange(n, device=tokens.device)[:, None] * K + cand.from_beam.gather(1, pick)  # (n, K)
    next_token = cand.token.gather(1, pick)  # (n, K)
    if observer is not None:
        observer.on_beams(t, rows[0], next_token[0], beam_scores[0])
    # A sentence whose best live beam can no longer beat its worst finished one leaves.
    kept, done = None, None
    if finished.some_full:
        worst_finished = finished.scores[active, -1]  # (n,)
        norm = float(t + 1) ** length_penalty
        done = (worst_finished > float("-inf")) & (beam_scores[:, 0] / norm <= worst_finished)
    if done is not None and bool(done.any()):
        kept = (~done).nonzero().squeeze(1)  # (n',) positions of the sentences that go on
        active, rows, beam_scores, next_token = active[kept], rows[kept], beam_scores[kept], next_token[kept]
    rows = rows.reshape(-1)  # (n'*K,)
    tokens = torch.cat([tokens[rows], next_token.reshape(-1, 1)], dim=1)  # (n'*K, t+2)
    return tokens, beam_scores, active, kept, rows


def _out_of_steps(
    tokens: Tensor,
    beam_scores: Tensor,
    active: Tensor,
    finished: _FinishedHypotheses,
    length_penalty: float,
    pad_id: int,
    observer: SearchObserver | None,
) -> None:
    """Out of steps: the live beams compete with the finished hypotheses as they are."""
    n, K, steps = active.numel(), beam_scores.size(1), tokens.size(1) - 1
    ids = torch.full((n, K, finished.ids.size(2)), pad_id, dtype=torch.long, device=tokens.device)
    ids[:, :, :steps] = tokens[:, 1:].view(n, K, steps)
    normalised = beam_scores / float(steps) ** length_penalty  # (n, K)
    finished.add(active, ids, normalised)
    if observer is not None:
        real = beam_scores[0] > float("-inf")
        rows = torch.arange(K, device=tokens.device)
        observer.on_finished(steps - 1, rows[real], beam_scores[0][real], normalised[0][real], False)
