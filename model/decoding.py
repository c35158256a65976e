"""Greedy and beam search over the decoder, with or without the key/value cache.

Shape legend: B batch, K beams, N = B * K decoder rows, S source length, t steps decoded so far,
V vocabulary. Both searches return (B, T') ids: the tokens after BOS, up to and including EOS,
right-padded with pad_id. The cache changes the cost, never the tokens: the uncached decoder
re-runs the full decoder over the prefix at every step and is kept to prove it.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .attention import padding_mask
from .step import CachedDecoder, UncachedDecoder


def _start(model, src: Tensor, max_new_tokens: int, num_beams: int, use_cache: bool):
    """Encode the source once and build the step function for N = B * num_beams rows."""
    config = model.config
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    if src.size(1) > config.max_len:
        raise ValueError(f"source of {src.size(1)} tokens is longer than max_len={config.max_len}")
    # The decoder sees BOS plus all but the last new token: max_new_tokens positions in all.
    max_new_tokens = min(max_new_tokens, config.max_len)
    src_mask = padding_mask(src, config.pad_id)  # (B, 1, 1, S)
    memory, _ = model.encode(src, src_mask)  # (B, S, D)
    decoder_cls = CachedDecoder if use_cache else UncachedDecoder
    return decoder_cls(model, memory, src_mask, num_beams, capacity=max_new_tokens), max_new_tokens


class _Banned:
    """Padding and BOS are never outputs (so 'pad' keeps meaning 'no token'); EOS not before
    min_new_tokens. The id tensors are built once per search, not at every step."""

    def __init__(self, config, min_new_tokens: int, device: torch.device):
        self.always = torch.tensor([config.pad_id, config.bos_id], device=device)
        self.early = torch.tensor([config.pad_id, config.bos_id, config.eos_id], device=device)
        self.min_new_tokens = min_new_tokens

    def __call__(self, logits: Tensor, step: int) -> Tensor:
        banned = self.early if step < self.min_new_tokens else self.always
        return logits.index_fill_(1, banned, float("-inf"))


def _trim(ids: Tensor, pad_id: int) -> Tensor:
    """Drop the columns that are padding in every row."""
    lengths = (ids != pad_id).sum(dim=1)
    return ids[:, : int(lengths.max()) if lengths.numel() else 0]


def greedy_search(model, src: Tensor, max_new_tokens: int, use_cache: bool = True, min_new_tokens: int = 0) -> Tensor:
    """Pick the most likely next token at every step until every sentence has produced EOS."""
    config = model.config
    decoder, max_new_tokens = _start(model, src, max_new_tokens, 1, use_cache)
    never_generate = _Banned(config, min_new_tokens, src.device)
    B = src.size(0)
    tokens = torch.full((B, 1), config.bos_id, dtype=torch.long, device=src.device)  # (B, 1)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for t in range(max_new_tokens):
        logits = never_generate(decoder(tokens), t)  # (B, V)
        next_token = logits.argmax(dim=-1).masked_fill(finished, config.pad_id)  # (B,)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)  # (B, t+1)
        finished |= next_token == config.eos_id
        if bool(finished.all()):
            break
    return tokens[:, 1:]


def beam_search(
    model,
    src: Tensor,
    max_new_tokens: int,
    num_beams: int,
    length_penalty: float = 1.0,
    use_cache: bool = True,
    min_new_tokens: int = 0,
) -> Tensor:
    """Keep the K best prefixes of every sentence; return the best finished one.

    A finished hypothesis scores sum(log p) / length ** length_penalty. A sentence stops once it
    has K finished hypotheses and its best live prefix, normalised at the current length, cannot
    beat the worst of them; it then leaves the batch, so the others decode faster.
    """
    config = model.config
    K = num_beams
    V = config.vocab_size
    if K < 1 or 2 * K > V:
        raise ValueError(f"num_beams must be between 1 and vocab_size / 2, got {K}")
    decoder, max_new_tokens = _start(model, src, max_new_tokens, K, use_cache)
    never_generate = _Banned(config, min_new_tokens, src.device)
    B, device = src.size(0), src.device

    tokens = torch.full((B * K, 1), config.bos_id, dtype=torch.long, device=device)  # (N, 1)
    # All beams start as the same BOS prefix; only the first is live, or step one would pick
    # the same K tokens K times over.
    beam_scores = torch.full((B, K), float("-inf"), device=device)
    beam_scores[:, 0] = 0.0
    finished_scores = torch.full((B, K), float("-inf"), device=device)  # sorted best first
    finished_ids = torch.full((B, K, max_new_tokens), config.pad_id, dtype=torch.long, device=device)
    active = torch.arange(B, device=device)  # sentences still searching, as indices into B

    def keep_best(sentences: Tensor, ids: Tensor, scores: Tensor) -> None:
        """Merge new hypotheses ids (n, m, max_new), scores (n, m) into the K best of each sentence."""
        all_scores = torch.cat([finished_scores[sentences], scores], dim=1)  # (n, K+m)
        all_ids = torch.cat([finished_ids[sentences], ids], dim=1)  # (n, K+m, max_new)
        best, pick = all_scores.topk(K, dim=1)  # (n, K)
        finished_scores[sentences] = best
        finished_ids[sentences] = all_ids.gather(1, pick[:, :, None].expand(-1, -1, max_new_tokens))

    for t in range(max_new_tokens):
        n = active.numel()
        logits = never_generate(decoder(tokens), t)  # (n*K, V)
        log_probs = logits.float().log_softmax(dim=-1)  # (n*K, V)
        # score(beam + token) = beam score + log p(token). The 2K best of a sentence are among the
        # 2K best tokens of each of its beams, so take those first and never materialise all
        # K x V sums.
        row_top, row_tokens = log_probs.topk(2 * K, dim=1)  # (n*K, 2K)
        row_scores = row_top + beam_scores.view(n * K, 1)
        top_scores, top_ids = row_scores.view(n, K * 2 * K).topk(2 * K, dim=1)  # (n, 2K): >= K not EOS
        from_beam = top_ids // (2 * K)  # (n, 2K)
        token = row_tokens.view(n, K * 2 * K).gather(1, top_ids)  # (n, 2K)
        is_eos = token == config.eos_id
        norm = float(t + 1) ** length_penalty

        # 1. EOS among the K best candidates ends a hypothesis.
        ends = is_eos[:, :K]  # (n, K)
        if bool(ends.any()):
            prefix = tokens[:, 1:].view(n, K, t)  # (n, K, t)
            ids = torch.full((n, K, max_new_tokens), config.pad_id, dtype=torch.long, device=device)
            ids[:, :, :t] = prefix.gather(1, from_beam[:, :K, None].expand(-1, -1, t))
            ids[:, :, t] = config.eos_id
            keep_best(active, ids, torch.where(ends, top_scores[:, :K] / norm, float("-inf")))

        # 2. The K best candidates that do not end become the next beams.
        live_scores = top_scores.masked_fill(is_eos, float("-inf"))
        beam_scores, pick = live_scores.topk(K, dim=1)  # (n, K)
        rows = torch.arange(n, device=device)[:, None] * K + from_beam.gather(1, pick)  # (n, K) rows of tokens
        next_token = token.gather(1, pick)  # (n, K)

        # 3. Sentences whose best live beam can no longer beat their worst finished one leave.
        worst_finished = finished_scores[active, -1]  # (n,)
        done = (worst_finished > float("-inf")) & (beam_scores[:, 0] / norm <= worst_finished)
        batch_changed = bool(done.any())
        kept = None
        if batch_changed:
            kept = (~done).nonzero().squeeze(1)  # (n',) positions of the sentences that go on
            active, rows, beam_scores, next_token = active[kept], rows[kept], beam_scores[kept], next_token[kept]
        rows = rows.reshape(-1)  # (n'*K,)
        tokens = torch.cat([tokens[rows], next_token.reshape(-1, 1)], dim=1)  # (n'*K, t+2)
        if active.numel() == 0:
            break
        decoder.reorder(rows, kept)

    if active.numel() > 0:
        # Out of steps: the live beams compete with the finished hypotheses as they are.
        n, steps = active.numel(), tokens.size(1) - 1
        ids = torch.full((n, K, max_new_tokens), config.pad_id, dtype=torch.long, device=device)
        ids[:, :, :steps] = tokens[:, 1:].view(n, K, steps)
        keep_best(active, ids, beam_scores / float(steps) ** length_penalty)

    return _trim(finished_ids[:, 0], config.pad_id)
