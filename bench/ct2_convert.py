"""Our checkpoint written one to one into a CTranslate2 Transformer spec, for a fair speed comparison.

    python bench/ct2_convert.py [--checkpoint checkpoints/de-en] [--output /tmp/ct2-de-en]

CTranslate2's own route through transformers' MarianMTModel does not fit our model: it drops the
last vocabulary row and starts decoding from a zero embedding instead of <s>. So every array goes
in by hand: the tied embedding (source, target, output), the interleaved sinusoid table as the
positional encodings, the stacked W_Q/W_K/W_V (split W_Q | W_K,W_V for cross-attention), the
Post-LN (or Pre-LN) norms, and the vocabulary in id order. `check_scores` proves the copy: the
log-probability CTranslate2 gives each token of a translation equals ours.

Shape legend: V vocabulary, D model width, L max_len.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from translation import Translator  # noqa: E402


def _array(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().contiguous().numpy()


def _linear(spec, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
    spec.weight = _array(weight)  # (out, in): CTranslate2 keeps nn.Linear's layout
    if bias is not None:
        spec.bias = _array(bias)


def _norm(spec, norm) -> None:
    spec.gamma, spec.beta = _array(norm.weight), _array(norm.bias)


def _attention(spec, mha, norm) -> None:
    """Self-attention: one fused (3D, D) input projection; cross: W_Q, then W_K and W_V fused."""
    D = mha.d_model
    w, b = mha.in_proj.weight, mha.in_proj.bias
    if mha.cross:
        _linear(spec.linear[0], w[:D], b[:D])
        _linear(spec.linear[1], w[D:], b[D:])
    else:
        _linear(spec.linear[0], w, b)
    _linear(spec.linear[-1], mha.out_proj.weight, mha.out_proj.bias)
    _norm(spec.layer_norm, norm)


def _feed_forward(spec, ff, norm) -> None:
    _linear(spec.linear_0, ff.linear1.weight, ff.linear1.bias)
    _linear(spec.linear_1, ff.linear2.weight, ff.linear2.bias)
    _norm(spec.layer_norm, norm)


def _stack_common(spec, model, final_norm) -> None:
    """Embedding scale, positional table, tied embedding and (Pre-LN only) the final norm."""
    spec.scale_embeddings = math.sqrt(model.config.d_model)
    spec.position_encodings.encodings = _array(model.pos.pe)  # (L, D): ours interleave sin/cos
    embeddings = spec.embeddings[0] if isinstance(spec.embeddings, list) else spec.embeddings
    embeddings.weight = _array(model.embed.weight)  # (V, D)
    if model.config.norm_first:
        _norm(spec.layer_norm, final_norm)


def ct2_spec(translator: Translator):
    """A ctranslate2.specs.TransformerSpec holding the translator's weights and vocabulary."""
    from ctranslate2.specs import common_spec, transformer_spec

    model, c = translator.model, translator.config
    spec = transformer_spec.TransformerSpec.from_config(
        (c.n_encoder_layers, c.n_decoder_layers),
        c.n_heads,
        pre_norm=c.norm_first,
        activation=common_spec.Activation.RELU,
    )
    _stack_common(spec.encoder, model, model.encoder_norm)
    for layer_spec, layer in zip(spec.encoder.layer, model.encoder_layers):
        _attention(layer_spec.self_attention, layer.self_attn, layer.norm1)
        _feed_forward(layer_spec.ffn, layer.ff, layer.norm2)
    _stack_common(spec.decoder, model, model.decoder_norm)
    for layer_spec, layer in zip(spec.decoder.layer, model.decoder_layers):
        _attention(layer_spec.self_attention, layer.self_attn, layer.norm1)
        _attention(layer_spec.attention, layer.cross_attn, layer.norm2)
        _feed_forward(layer_spec.ffn, layer.ff, layer.norm3)
    _linear(spec.decoder.projection, model.lm_head.weight, None)
    tokens = vocabulary(translator)
    spec.register_source_vocabulary(tokens)
    spec.register_target_vocabulary(tokens)
    spec.config.bos_token, spec.config.eos_token = tokens[c.bos_id], tokens[c.eos_id]
    spec.config.decoder_start_token = tokens[c.bos_id]
    spec.config.unk_token = "<unk>" if "<unk>" in tokens else tokens[c.pad_id]
    spec.config.layer_norm_epsilon = model.decoder_layers[0].norm1.eps
    return spec


def vocabulary(translator: Translator) -> list[str]:
    """Token strings in id order, all V of them (the stock converter loses the last)."""
    tokens = [translator.tokenizer.id_to_token(i) for i in range(translator.config.vocab_size)]
    if None in tokens or len(set(tokens)) != len(tokens):
        raise ValueError("the tokenizer's vocabulary has gaps or repeats: CTranslate2 needs one string per id")
    return tokens


def convert(translator: Translator, output_dir: str | Path) -> Path:
    """Write the CTranslate2 model (fp32 weights; pick int8 at load time with compute_type)."""
    spec = ct2_spec(translator)
    spec.validate()
    spec.optimize(quantization=None)
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    spec.save(str(output_dir))
    return Path(output_dir)


def source_tokens(translator: Translator, text: str) -> list[str]:
    """Our source ids (ending in EOS, cut to max_len) as CTranslate2 token strings."""
    ids, _ = translator.encode_source(text)
    return [translator.tokenizer.id_to_token(i) for i in ids]


def translate(translator: Translator, ct2, sentences: list[str], num_beams: int, batch_size: int) -> list[str]:
    """CTranslate2 fed our source ids, sorted by length and batched like Translator.translate, with the same
    length limit (2 x source + 10 tokens)."""
    tokens = [source_tokens(translator, s) for s in sentences]
    order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
    out = [""] * len(tokens)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        batch = [tokens[i] for i in chunk]
        results = ct2.translate_batch(
            batch, beam_size=num_beams, max_batch_size=batch_size, max_decoding_length=2 * max(map(len, batch)) + 10
        )
        for i, result in zip(chunk, results):
            out[i] = translator.decode([translator.tokenizer.token_to_id(t) for t in result.hypotheses[0]])
    return out


def load(model_dir: str | Path, compute_type: str = "float32", threads: int = 1):
    import ctranslate2

    return ctranslate2.Translator(
        str(model_dir), device="cpu", compute_type=compute_type, intra_threads=threads, inter_threads=1
    )


def check_scores(translator: Translator, ct2, sentences: list[str]) -> float:
    """Largest gap between CTranslate2's and our log-probability of a token of our greedy translation."""
    worst = 0.0
    for text in sentences:
        src_ids, _ = translator.encode_source(text)
        out_ids = [i for i in translator.generate_ids([src_ids], 1, 1.0, None)[0] if i != translator.config.pad_id]
        # score_batch appends </s> itself: hand it the tokens before it.
        body = out_ids[:-1] if out_ids[-1] == translator.config.eos_id else out_ids
        target = [translator.tokenizer.id_to_token(i) for i in body]
        theirs = ct2.score_batch([source_tokens(translator, text)], [target])[0].log_probs[: len(out_ids)]
        with torch.inference_mode():
            tgt_in = torch.tensor([[translator.config.bos_id] + out_ids[:-1]])
            logits = translator.model(torch.tensor([src_ids]), tgt_in)[0].log_softmax(dim=-1)  # (T, V)
        ours = logits.gather(1, torch.tensor(out_ids)[:, None])[:, 0].tolist()
        if len(theirs) != len(ours):
            raise AssertionError(f"CTranslate2 scored {len(theirs)} tokens, we scored {len(ours)}: {text!r}")
        worst = max(worst, max(abs(a - b) for a, b in zip(theirs, ours)))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--output", default=None, help="folder for the CTranslate2 model (default: a temp folder)")
    args = parser.parse_args()
    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    output = Path(args.output or tempfile.mkdtemp(prefix="ct2-")) / "model"
    convert(translator, output)
    sentences = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee.", "Eine Frau liest ein Buch im Park."]
    gap = check_scores(translator, load(output), sentences)
    print(f"wrote {output}; largest log-prob gap to ours on {len(sentences)} sentences: {gap:.2e}")


if __name__ == "__main__":
    main()
