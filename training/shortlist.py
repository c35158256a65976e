"""Build a checkpoint's vocabulary shortlist (generation/shortlist.py) from the corpora it was trained on.

    python -m training.shortlist --checkpoint checkpoints/de-en [--corpus multi30k] [--per-piece 64] [--frequent 1000]

For each German piece: the English pieces that occur in the most training pairs with it, ranked by
the Dice coefficient over pairs (2 c(de, en) / (c(de) + c(en))); beside them the most frequent English pieces.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from generation.shortlist import Shortlist
from tokenizer import load_tokenizer

from .evidence import corpus_parser, training_corpora


def piece_sets(tokenizer, texts: list[str]) -> list[list[int]]:
    return [sorted(set(e.ids)) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def build(tokenizer, german: list[str], english: list[str], per_piece: int, frequent: int) -> Shortlist:
    """Co-occurrence counts over pairs, as sparse (V, V) products: the table and the frequent pieces."""
    V = tokenizer.get_vocab_size()

    def indicator(sets: list[list[int]]) -> torch.Tensor:  # (pairs, V), 1 where the pair holds the piece
        rows = torch.tensor([r for r, ids in enumerate(sets) for _ in ids])
        cols = torch.tensor([i for ids in sets for i in ids])
        return torch.sparse_coo_tensor(torch.stack([rows, cols]), torch.ones(len(cols)), (len(sets), V)).coalesce()

    src, tgt = indicator(piece_sets(tokenizer, german)), indicator(piece_sets(tokenizer, english))
    together = torch.sparse.mm(src.t().coalesce(), tgt).to_dense()  # (V, V): pairs holding both
    per_german = torch.sparse.sum(src, 0).to_dense()  # (V,)
    english_counts = torch.sparse.sum(tgt, 0).to_dense()
    # Dice: pieces that come with this German piece rather than with every sentence (those are frequent).
    dice = 2 * together / (per_german[:, None] + english_counts[None, :]).clamp(min=1)
    scores, table = dice.topk(per_piece, dim=1)  # (V, P)
    table[scores == 0] = -1  # never seen together: no candidate
    return Shortlist(table, english_counts.topk(frequent).indices)


def main(argv: list[str] | None = None) -> int:
    parser = corpus_parser(__doc__.split("\n\n")[0], "shortlist.safetensors")
    parser.add_argument("--per-piece", type=int, default=64, help="English pieces kept per German piece")
    parser.add_argument("--frequent", type=int, default=1000, help="most frequent English pieces, always candidates")
    args = parser.parse_args(argv)
    folder = Path(args.checkpoint)
    tokenizer = load_tokenizer(folder / "tokenizer.json")
    corpora = training_corpora(args.corpus, args.data_dir, args.ding_dir)
    german = [s for de, _ in corpora.values() for s in de]
    english = [s for _, en in corpora.values() for s in en]
    path = build(tokenizer, german, english, args.per_piece, args.frequent).save(folder)
    print(f"wrote {path} ({len(german):,} pairs, {args.per_piece} pieces per German piece, {args.frequent} frequent)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
