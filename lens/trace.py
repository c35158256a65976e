"""A decoding trace: how a translation was made, step by step, from the search `generate` runs.

`trace()` decodes once with the cached decoder and a recorder attached to the search (a
SearchObserver, generation/search.py): for every output step the chosen token, its probability,
the top-k alternatives, the entropy and the attention rows of that step; with beams, every
hypothesis the search kept (the beam tree) and the ranked n-best list.
Shape legend: L decoder layers, H heads, S source tokens, t tokens read at a step (BOS first),
N decoder rows (beams), V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from generation.step import StepAttention
from lens.maps import rounded_lists
from model.heads import HeadMask
from tokenizer import token_strings
from translation import Translator


@dataclass
class TraceStep:
    """One output step: what was chosen, with what probability, what else, and what it attended to."""

    token_id: int
    prob: float  # the model's probability of the chosen token (softmax of the step's logits)
    top_ids: list[int]  # the k most likely tokens, most likely first
    top_probs: list[float]
    entropy: float  # of the whole next-token distribution, in nats
    forced: bool  # part of the forced prefix
    cross: np.ndarray  # (L, H, S): cross-attention row of this step
    decoder: np.ndarray  # (L, H, t): decoder self-attention row over the tokens read so far


@dataclass
class BeamNode:
    """A hypothesis the beam search kept: its last token, parent, scores and fate."""

    id: int
    parent: int  # -1 for the root (BOS)
    step: int  # output position of its last token; -1 for the root
    token_ids: list[int]  # the whole hypothesis after BOS
    log_prob: float  # cumulative log-probability the search ranked by
    score: float  # log_prob / length ** length_penalty
    status: str = "pruned"  # "winner" (on the winner's path), "finished", "expanded" or "pruned"


@dataclass
class Trace:
    """Everything one decoding did, as numpy arrays, ids and strings (token strings from the tokenizer)."""

    translation: str
    source_tokens: list[str]  # S
    target_ids: list[int]  # T, ending in EOS when the model finished
    target_tokens: list[str]
    steps: list[TraceStep]  # T
    num_beams: int
    length_penalty: float
    prefix_length: int  # how many of the first steps were forced
    beam: list[BeamNode] = field(default_factory=list)  # empty for greedy decoding
    nbest: list[int] = field(default_factory=list)  # ids of finished nodes, best first
    token_text: dict[int, str] = field(default_factory=dict)  # id -> readable piece, for every id used

    def to_dict(self, decimals: int = 4) -> dict:
        """JSON-ready: tokens as word pieces, probabilities and maps rounded to `decimals` places."""

        def r(values) -> list:
            return rounded_lists(values, decimals)

        piece = self.token_text.get
        steps = [
            {
                "token": piece(s.token_id),
                "token_id": s.token_id,
                "prob": round(s.prob, decimals),
                "top_k": [
                    {"token": piece(i), "token_id": i, "prob": round(p, decimals)}
                    for i, p in zip(s.top_ids, s.top_probs)
                ],
                "entropy": round(s.entropy, decimals),
                "forced": s.forced,
                "cross": r(s.cross),
                "decoder": r(s.decoder),
            }
            for s in self.steps
        ]
        beam = [
            {
                "id": n.id,
                "parent": n.parent,
                "step": n.step,
                "token": piece(n.token_ids[-1]) if n.token_ids else "<s>",
                "tokens": [piece(i) for i in n.token_ids],
                "log_prob": round(n.log_prob, decimals),
                "score": round(n.score, decimals),
                "status": n.status,
            }
            for n in self.beam
        ]
        by_id = {n.id: n for n in self.beam}
        nbest = [
            {
                "node": i,
                "tokens": [piece(t) for t in by_id[i].token_ids],
                "score": round(by_id[i].score, decimals),
                "log_prob": round(by_id[i].log_prob, decimals),
            }
            for i in self.nbest
        ]
        return {
            "translation": self.translation,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "num_beams": self.num_beams,
            "length_penalty": self.length_penalty,
            "prefix_length": self.prefix_length,
            "steps": steps,
            "beam": beam,
            "nbest": nbest,
        }


class SearchRecorder:
    """A SearchObserver: keeps each step's distribution and attention rows, and builds the beam tree."""

    wants_attention = True

    def __init__(self, length_penalty: float):
        self.length_penalty = length_penalty
        self.log_probs: list[Tensor] = []  # per step (N, V)
        self.attention: list[StepAttention] = []
        self.nodes = [BeamNode(id=0, parent=-1, step=-1, token_ids=[], log_prob=0.0, score=0.0)]
        self.row_nodes: list[list[BeamNode | None]] = [[self.nodes[0]]]  # per step: the node each row holds

    def on_step(self, step: int, log_probs: Tensor, attention: StepAttention | None) -> None:
        assert attention is not None  # it wants_attention
        self.log_probs.append(log_probs)
        self.attention.append(attention)

    def _child(self, step: int, parent: BeamNode, token: int, log_prob: float) -> BeamNode:
        length = len(parent.token_ids) + 1
        node = BeamNode(
            id=len(self.nodes),
            parent=parent.id,
            step=step,
            token_ids=parent.token_ids + [token],
            log_prob=log_prob,
            score=log_prob / float(length) ** self.length_penalty,
        )
        self.nodes.append(node)
        return node

    def on_beams(self, step: int, parents: Tensor, tokens: Tensor, scores: Tensor) -> None:
        rows = self.row_nodes[step]
        kept: list[BeamNode | None] = []
        for parent, token, score in zip(parents.tolist(), tokens.tolist(), scores.tolist()):
            # -inf rows are the copies of BOS at the start and the rows a forced prefix leaves empty
            ok = score > float("-inf") and parent < len(rows) and rows[parent] is not None
            kept.append(self._child(step, rows[parent], token, score) if ok else None)
        self.row_nodes.append(kept)

    def on_finished(self, step: int, parents: Tensor, scores: Tensor, normalised: Tensor, ended: bool) -> None:
        rows = self.row_nodes[step] if ended else self.row_nodes[step + 1]
        for parent, score, norm in zip(parents.tolist(), scores.tolist(), normalised.tolist()):
            node = rows[parent]
            if node is None:
                continue
            if ended:  # EOS appended to a live beam
                node = self._child(step, node, EOS_MARK, score)
            node.status, node.score = "finished", norm

    def path_rows(self, target_ids: list[int]) -> tuple[list[int], BeamNode]:
        """The decoder row that produced each output token, and the finished node of the output."""
        winner = next(n for n in reversed(self.nodes) if n.token_ids == target_ids)
        by_id = {n.id: n for n in self.nodes}
        chain = [winner]
        while chain[-1].parent >= 0:
            chain.append(by_id[chain[-1].parent])
        chain.reverse()  # root, then one node per output token
        rows = [next(i for i, n in enumerate(self.row_nodes[t]) if n is chain[t]) for t in range(len(target_ids))]
        return rows, winner


EOS_MARK = -1  # replaced by the real EOS id once the search is over (the recorder does not know it)


def _finish_tree(recorder: SearchRecorder, eos_id: int, target_ids: list[int], num_beams: int) -> list[int]:
    """Give every node its status and return the n-best node ids, best first."""
    for node in recorder.nodes:
        node.token_ids = [eos_id if i == EOS_MARK else i for i in node.token_ids]
    _, winner = recorder.path_rows(target_ids)
    by_id = {n.id: n for n in recorder.nodes}
    for node in recorder.nodes:  # nodes start "pruned"; one with a kept child was expanded
        if node.parent >= 0 and by_id[node.parent].status != "finished":
            by_id[node.parent].status = "expanded"
    node = winner
    while True:
        node.status = "winner"
        if node.parent < 0:
            break
        node = by_id[node.parent]
    finished = [n for n in recorder.nodes if n.status == "finished" or (n.status == "winner" and n is winner)]
    finished.sort(key=lambda n: -n.score)
    return [n.id for n in finished[:num_beams]]


def trace(
    translator: Translator,
    text: str,
    num_beams: int = 1,
    length_penalty: float = 1.0,
    top_k: int = 10,
    max_new_tokens: int | None = None,
    prefix: str | list[int] | None = None,
    head_mask: HeadMask | None = None,
) -> Trace:
    """Translate `text` once, recording every step of the search (see the module docstring)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("trace needs a non-empty sentence (str)")
    vocab = translator.config.vocab_size
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= vocab:
        raise ValueError(f"top_k must be an integer in [1, {vocab}], got {top_k!r}")
    src_ids, _ = translator.encode_source(text)
    prefix_ids = translator.encode_prefix(prefix)
    recorder = SearchRecorder(length_penalty)
    out = translator.generate_ids(
        [src_ids], num_beams, length_penalty, max_new_tokens, prefix_ids, head_mask, observer=recorder
    )[0]
    target_ids = [i for i in out if i != translator.config.pad_id]
    nbest = _finish_tree(recorder, translator.config.eos_id, target_ids, num_beams)
    rows, _ = recorder.path_rows(target_ids)
    steps = [
        _step(recorder, t, row, token, top_k, t < len(prefix_ids or []))
        for t, (row, token) in enumerate(zip(rows, target_ids))
    ]
    beam = recorder.nodes if num_beams > 1 else []
    used = {i for n in beam for i in n.token_ids} | {i for s in steps for i in s.top_ids} | set(target_ids)
    return Trace(
        translation=translator.decode(target_ids),
        source_tokens=token_strings(translator.tokenizer, src_ids),
        target_ids=target_ids,
        target_tokens=token_strings(translator.tokenizer, target_ids),
        steps=steps,
        num_beams=num_beams,
        length_penalty=length_penalty,
        prefix_length=len(prefix_ids or []),
        beam=beam,
        nbest=nbest if num_beams > 1 else [],
        token_text=dict(zip(sorted(used), token_strings(translator.tokenizer, sorted(used)))),
    )


def _step(recorder: SearchRecorder, t: int, row: int, token: int, top_k: int, forced: bool) -> TraceStep:
    """What row `row` of step t saw: its distribution (V,) and attention rows."""
    log_probs = recorder.log_probs[t][row].float()  # (V,)
    probs = log_probs.exp()
    top = probs.topk(top_k)
    attention = recorder.attention[t]
    return TraceStep(
        token_id=token,
        prob=float(probs[token]),
        top_ids=top.indices.tolist(),
        top_probs=top.values.tolist(),
        entropy=float(torch.special.entr(probs).sum()),
        forced=forced,
        cross=torch.stack([w[row] for w in attention.cross]).float().cpu().numpy(),  # (L, H, S)
        decoder=torch.stack([w[row] for w in attention.decoder]).float().cpu().numpy(),  # (L, H, t)
    )
