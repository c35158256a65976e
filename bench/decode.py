"""Decoding speed, measured side by side in one process, interleaved, medians, one thread.

    pip install -r requirements-bench.txt
    python bench/decode.py [--repeats 7]

1. Cached greedy decoding against re-running the decoder over the whole prefix at every step,
   at 48 and 128 new tokens (same tokens required).
2. Against Hugging Face transformers' MarianMTModel.generate, built from a MarianConfig of the
   same size with random weights (nothing is downloaded): greedy per-token time at batch 1, and
   sentences per second with beam 4 over a batch of 64. Lengths are fixed with
   min_new_tokens = max_new_tokens so both sides produce the same number of tokens.
3. With a trained checkpoint of that size (--checkpoint, default checkpoints/de-en): the same
   comparison on 128 Multi30k val sentences, Marian holding our weights (so both translate alike),
   each sentence stopping at its own EOS.
4. Against CTranslate2 holding the checkpoint's weights (bench/versus_ct2.py): greedy batch 1,
   beam 4 in batches of 64, at 1 and 2 threads, fp32 and int8; peak RSS; val BLEU; explain().
5. Each speed lever switched off alone (bench/decode_levers.py).

    python bench/decode.py --parts 4 5      # only the CTranslate2 rows and the levers
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from model import Transformer, TransformerConfig  # noqa: E402
from translation import Translator  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import DEFAULT_CORPUS, corpus_dir, interleaved  # noqa: E402

from generation import generate

SIZE = dict(
    vocab_size=8000,
    d_model=256,
    n_heads=4,
    n_encoder_layers=3,
    n_decoder_layers=3,
    d_ff=1024,
    dropout=0.0,
    max_len=256,
    pad_id=0,
    bos_id=1,
    eos_id=2,
)


def marian_model():
    from transformers import MarianConfig, MarianMTModel

    config = MarianConfig(
        vocab_size=SIZE["vocab_size"],
        d_model=SIZE["d_model"],
        encoder_layers=SIZE["n_encoder_layers"],
        decoder_layers=SIZE["n_decoder_layers"],
        encoder_attention_heads=SIZE["n_heads"],
        decoder_attention_heads=SIZE["n_heads"],
        encoder_ffn_dim=SIZE["d_ff"],
        decoder_ffn_dim=SIZE["d_ff"],
        max_position_embeddings=SIZE["max_len"],
        activation_function="relu",
        scale_embedding=True,
        pad_token_id=SIZE["pad_id"],
        eos_token_id=SIZE["eos_id"],
        decoder_start_token_id=SIZE["bos_id"],
        forced_eos_token_id=None,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
    )
    return MarianMTModel(config).eval()


def marian_with_our_weights(ours: Transformer):
    """A MarianMTModel computing what our model computes, for a comparison on real translations.

    Same architecture; only the positional encoding lays its sinusoids out differently (all sines,
    then all cosines, where ours interleaves them). Permuting the model dimension of every weight
    that reads or writes the residual stream turns one layout into the other.
    """
    c = ours.config
    marian = marian_model()
    D = c.d_model
    perm = torch.cat([torch.arange(0, D, 2), torch.arange(1, D, 2)])  # Marian dim m = our dim perm[m]
    theirs = {}

    def reads(weight):  # a linear layer fed by the residual stream: permute its inputs
        return weight[:, perm]

    def writes(weight, bias):  # a linear layer adding to the residual stream: permute its outputs
        return weight[perm], bias[perm]

    def attention(prefix, mha):
        wq, wk, wv = mha.in_proj.weight.chunk(3)
        bq, bk, bv = mha.in_proj.bias.chunk(3)
        for name, w, b in (("q", wq, bq), ("k", wk, bk), ("v", wv, bv)):
            theirs[f"{prefix}.{name}_proj.weight"], theirs[f"{prefix}.{name}_proj.bias"] = reads(w), b
        theirs[f"{prefix}.out_proj.weight"], theirs[f"{prefix}.out_proj.bias"] = writes(
            mha.out_proj.weight, mha.out_proj.bias
        )

    def norm(prefix, ln):
        theirs[f"{prefix}.weight"], theirs[f"{prefix}.bias"] = ln.weight[perm], ln.bias[perm]

    def feed_forward(prefix, ff):
        theirs[f"{prefix}.fc1.weight"], theirs[f"{prefix}.fc1.bias"] = reads(ff.linear1.weight), ff.linear1.bias
        theirs[f"{prefix}.fc2.weight"], theirs[f"{prefix}.fc2.bias"] = writes(ff.linear2.weight, ff.linear2.bias)

    with torch.no_grad():
        embedding = ours.embed.weight[:, perm]
        for key in (
            "model.shared.weight",
            "model.encoder.embed_tokens.weight",
            "model.decoder.embed_tokens.weight",
            "lm_head.weight",
        ):
            theirs[key] = embedding
        for i, layer in enumerate(ours.encoder_layers):
            p = f"model.encoder.layers.{i}"
            attention(f"{p}.self_attn", layer.self_attn)
            norm(f"{p}.self_attn_layer_norm", layer.norm1)
            feed_forward(p, layer.ff)
            norm(f"{p}.final_layer_norm", layer.norm2)
        for i, layer in enumerate(ours.decoder_layers):
            p = f"model.decoder.layers.{i}"
            attention(f"{p}.self_attn", layer.self_attn)
            norm(f"{p}.self_attn_layer_norm", layer.norm1)
            attention(f"{p}.encoder_attn", layer.cross_attn)
            norm(f"{p}.encoder_attn_layer_norm", layer.norm2)
            feed_forward(p, layer.ff)
            norm(f"{p}.final_layer_norm", layer.norm3)
        missing, unexpected = marian.load_state_dict({k: v.contiguous() for k, v in theirs.items()}, strict=False)
    assert not unexpected and all(k.endswith(("embed_positions.weight", "final_logits_bias")) for k in missing), missing
    return marian.eval()


def sources(batch: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(4, SIZE["vocab_size"], (batch, length), generator=gen)
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=gen)
    for row, n in enumerate(lengths.tolist()):
        src[row, n - 1] = SIZE["eos_id"]
        src[row, n:] = SIZE["pad_id"]
    return src, (src != SIZE["pad_id"]).long()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--checkpoint",
        default=str(Path(__file__).resolve().parent.parent / "checkpoints" / "de-en"),
        help="a trained checkpoint of the same size, for part 3",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help="Multi30k folder for part 3 (default: $MULTI30K_DIR, else ../shared/data/multi30k)",
    )
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2, 3, 4, 5], help="which parts to run")
    parser.add_argument("--bleu-sentences", type=int, default=1014, help="val sentences for part 4's BLEU")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if set(args.parts) & {1, 2, 3}:
        marian_parts(args)
    if 4 in args.parts or 5 in args.parts:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import decode_levers
        import versus_ct2

        if 4 in args.parts:
            print()
            versus_ct2.run(args.checkpoint, args.data_dir, [1, 2], max(3, args.repeats // 2), args.bleu_sentences)
        if 5 in args.parts:
            print()
            decode_levers.run(args.checkpoint, args.data_dir, 1, max(3, args.repeats // 2))


def marian_parts(args) -> None:
    """Parts 1-3: the KV cache, and transformers' MarianMTModel."""
    torch.manual_seed(0)
    ours = Transformer(TransformerConfig(**SIZE)).eval()
    print(f"model: {SIZE}, torch {torch.__version__}, 1 thread")

    print("\n1. KV cache: cached greedy vs re-running the decoder over the prefix (batch 1)")
    src, _ = sources(1, 24, seed=1)
    for n in (48, 128):
        cached = lambda: generate(ours, src, max_new_tokens=n, min_new_tokens=n)  # noqa: E731
        uncached = lambda: generate(ours, src, max_new_tokens=n, min_new_tokens=n, use_cache=False)  # noqa: E731
        assert torch.equal(cached(), uncached()), "cached and uncached decoding disagree"
        t = interleaved({"cached": cached, "uncached": uncached}, args.repeats)
        print(
            f"   {n:4d} new tokens: cached {t['cached'] * 1000:8.1f} ms, uncached {t['uncached'] * 1000:8.1f} ms"
            f"  -> {t['uncached'] / t['cached']:.2f}x faster (same tokens)"
        )

    try:
        marian = marian_model()
    except ImportError:
        print("\n(transformers is not installed: pip install -r requirements-bench.txt for the Marian comparison)")
        return
    import transformers

    print(f"\n2. Against transformers {transformers.__version__} MarianMTModel.generate (same sizes, random weights)")
    n = 64
    src, mask = sources(1, 24, seed=2)
    ours_greedy = lambda: generate(ours, src, max_new_tokens=n, min_new_tokens=n)  # noqa: E731
    marian_greedy = lambda: marian.generate(  # noqa: E731
        input_ids=src,
        attention_mask=mask,
        max_new_tokens=n,
        min_new_tokens=n,
        num_beams=1,
        do_sample=False,
    )
    with torch.inference_mode():
        t = interleaved({"ours": ours_greedy, "marian": marian_greedy}, args.repeats)
    print(
        f"   greedy, batch 1, {n} tokens: ours {t['ours'] / n * 1000:.2f} ms/token, "
        f"Marian {t['marian'] / n * 1000:.2f} ms/token -> {t['marian'] / t['ours']:.2f}x faster per token"
    )

    n, batch = 32, 64
    src, mask = sources(batch, 24, seed=3)
    ours_beam = lambda: generate(ours, src, max_new_tokens=n, min_new_tokens=n, num_beams=4)  # noqa: E731
    marian_beam = lambda: marian.generate(  # noqa: E731
        input_ids=src,
        attention_mask=mask,
        max_new_tokens=n,
        min_new_tokens=n,
        num_beams=4,
        do_sample=False,
        early_stopping=False,
    )
    with torch.inference_mode():
        t = interleaved({"ours": ours_beam, "marian": marian_beam}, max(3, args.repeats // 2))
    print(
        f"   beam 4, batch {batch}, {n} tokens: ours {batch / t['ours']:.1f} sentences/s, "
        f"Marian {batch / t['marian']:.1f} sentences/s -> {t['marian'] / t['ours']:.2f}x the throughput"
    )

    if Path(args.checkpoint, "model.safetensors").exists():
        real_translations(args, Translator.from_pretrained(args.checkpoint, device="cpu"))


def real_translations(args, translator) -> None:
    """Part 3: the trained checkpoint, and Marian holding the very same weights, on val sentences."""
    import data

    if translator.config != TransformerConfig(
        **{**SIZE, "vocab_size": translator.config.vocab_size, "dropout": translator.config.dropout}
    ):
        print(f"\n3. skipped: {args.checkpoint} is not of the benchmark's size")
        return
    ours = translator.model
    marian = marian_with_our_weights(ours)
    folder = corpus_dir(args.data_dir)
    if folder is None:
        print(f"\n3. skipped: Multi30k not found in {args.data_dir or DEFAULT_CORPUS} (set MULTI30K_DIR or --data-dir)")
        return
    val = data.load_split(folder, "val")
    sentences = val.src[:128]
    encoded = sorted((translator.encode_source(s)[0] for s in sentences), key=len)
    batches = []
    for start in range(0, len(encoded), 64):
        chunk = encoded[start : start + 64]
        src = torch.zeros(len(chunk), max(map(len, chunk)), dtype=torch.long)
        for row, ids in enumerate(chunk):
            src[row, : len(ids)] = torch.tensor(ids)
        batches.append((src, (src != SIZE["pad_id"]).long()))

    def run_ours():
        return [generate(ours, src, max_new_tokens=64, num_beams=4) for src, _ in batches]

    def run_marian():
        return [
            marian.generate(
                input_ids=src, attention_mask=mask, max_new_tokens=64, num_beams=4, length_penalty=1.0, do_sample=False
            )
            for src, mask in batches
        ]

    print(
        f"\n3. The trained checkpoint ({args.checkpoint}) and Marian with the same weights: "
        f"{len(sentences)} val sentences, beam 4, batches of 64, up to 64 new tokens, each stops at EOS"
    )
    with torch.inference_mode():
        ours_out, marian_out = run_ours(), run_marian()
        same = sum(
            translator.decode(a.tolist()) == translator.decode(b.tolist()[1:])
            for o, m in zip(ours_out, marian_out)
            for a, b in zip(o, m)
        )
        t = interleaved({"ours": run_ours, "marian": run_marian}, max(3, args.repeats // 2))
    n = len(sentences)
    print(f"   identical translations: {same}/{n}")
    print(
        f"   ours {n / t['ours']:.1f} sentences/s, Marian {n / t['marian']:.1f} sentences/s "
        f"-> {t['marian'] / t['ours']:.2f}x the throughput"
    )


if __name__ == "__main__":
    main()
