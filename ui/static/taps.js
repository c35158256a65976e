// @ts-check
// twin of: model/taps.py, lens/stream.py (tests/test_site.py)
/* Attention Lens, the taps in the page: one teacher-forced pass of the page's model (transformer.js) over a
   sentence and its translation, every intermediate under model/taps.py's name and in its shape (batch 1), so that
   the views drawn from taps (the Code view, the picture's steps) read here the numbers the server reads with
   lens/stream.py's `read` (tests/test_site.py holds them to 1e-3).

     const taps = tapPass(lens.model, e.ids, e.input); // Map: "encoder.0.self_attn.q" -> {shape: [1, H, S, dk], data}

   Shape legend: S source length, T target length (the decoder's input), D model width, H heads, dk = D / H,
   F the feed-forward width, V vocabulary. Arrays are row-major Float32Arrays. */
import { addNorm, linear, softmaxInPlace } from "./transformer.js";

/** (L, D) rows with the heads side by side -> (H, L, dk): the heads split, as model/attention.py's projections. */
function split(x, L, H, dk) {
  const out = new Float32Array(L * H * dk);
  for (let h = 0; h < H; h++) for (let r = 0; r < L; r++) {
    out.set(x.subarray(r * H * dk + h * dk, r * H * dk + (h + 1) * dk), (h * L + r) * dk);
  }
  return out;
}

/** (H, L, dk) -> (L, D): the heads concatenated. */
function merge(x, L, H, dk) {
  const out = new Float32Array(L * H * dk);
  for (let h = 0; h < H; h++) for (let r = 0; r < L; r++) {
    out.set(x.subarray((h * L + r) * dk, (h * L + r + 1) * dk), r * H * dk + h * dk);
  }
  return out;
}

/** One multi-head attention of L rows x over M rows `memory` (x itself for self-attention): offers q, k, v,
    scores (Q Kᵀ / √dk, before the mask), weights, heads (weights·V) and out (the heads times W_O); returns out. */
function attention(model, x, L, memory, M, p, causal, offer, keep) {
  const { D, H, dk } = model, from = memory || x;
  const q = split(linear(x, L, p.W, p.b, D, D, 0), L, H, dk);
  const k = split(linear(from, M, p.W, p.b, D, D, D), M, H, dk), v = split(linear(from, M, p.W, p.b, D, D, 2 * D), M, H, dk);
  offer("q", q, [1, H, L, dk]); offer("k", k, [1, H, M, dk]); offer("v", v, [1, H, M, dk]);
  const scores = new Float32Array(H * L * M), weights = new Float32Array(H * L * M), heads = new Float32Array(H * L * dk);
  const root = Math.sqrt(dk), row = new Float32Array(M);
  for (let h = 0; h < H; h++) for (let r = 0; r < L; r++) {
    const qo = (h * L + r) * dk, so = (h * L + r) * M;
    for (let c = 0; c < M; c++) {
      let s = 0;
      for (let i = 0; i < dk; i++) s += q[qo + i] * k[(h * M + c) * dk + i];
      scores[so + c] = s / root;
      row[c] = causal && c > r ? -Infinity : s / root; // the decoder's mask: no row sees the pieces after it
    }
    weights.set(softmaxInPlace(row, M), so);
    for (let c = 0; c < M; c++) {
      const w = weights[so + c];
      if (w) for (let i = 0; i < dk; i++) heads[qo + i] += w * v[(h * M + c) * dk + i];
    }
    if (keep && keep[h] !== 1) for (let i = 0; i < dk; i++) heads[qo + i] *= keep[h]; // a head switched off
  }
  offer("scores", scores, [1, H, L, M]); offer("weights", weights, [1, H, L, M]);
  const mixed = offer("heads", heads, [1, H, L, dk]); // a patched run may put another run's heads here
  const out = linear(merge(mixed, L, H, dk), L, p.Wo, p.bo, D, D);
  offer("out", out, [1, L, D]);
  return out;
}

/** The feed-forward network of L rows: offers hidden (max(0, x W1 + b1)) and out; returns out. */
function feedForward(model, x, L, f, offer) {
  const hidden = linear(x, L, f.W1, f.b1, model.D, model.F);
  for (let i = 0; i < hidden.length; i++) if (hidden[i] < 0) hidden[i] = 0;
  offer("hidden", hidden, [1, L, model.F]);
  const out = linear(hidden, L, f.W2, f.b2, model.F, model.D);
  offer("out", out, [1, L, model.D]);
  return out;
}

/** ids -> the stream's start: offers tokens (the embedding rows, or `standIn`'s in their place: lens/stream.py's
    standing_in) and embed (× √D, plus the positions). */
function embedded(model, ids, offer, standIn) {
  const { D } = model, L = ids.length, tokens = new Float32Array(L * D);
  ids.forEach((id, r) => tokens.set(model.embed.subarray(id * D, (id + 1) * D), r * D));
  if (standIn) tokens.set(standIn);
  offer("tokens", tokens, [1, L, D]);
  const x = standIn ? tokens.map((v, i) => v * Math.sqrt(D) + model.pe[i]) : model.embedding(ids, 0);
  return offer("embed", x, [1, L, D]).slice();
}

/** Post-LN: x = LayerNorm(x + sublayer), offered as "resid" (and where a patched run replaces it, the replacement
    goes on). */
function residual(model, x, out, L, norm, offer) {
  addNorm(x, out, L, model.D, norm.g, norm.b);
  return offer("resid", x.slice(), [1, L, model.D]).slice();
}

/** Every tap of the teacher-forced pass over source `ids` (ending in EOS) and decoder `input` (BOS and the
    translation but its last piece), as a Map of name -> {shape, data}. `standIn` (S x D): the source's token
    embedding in place of the model's (the page's why-not); `replace(name, data)`: another tensor for a tap, which
    the pass then goes on with (lens/stream.py's replacing: the page's patching), or undefined to keep it. */
export function tapPass(model, ids, input, { standIn = null, replace = null } = {}) {
  const taps = new Map(), S = ids.length, T = input.length;
  const under = (prefix) => (name, data, shape) => {
    const full = `${prefix}.${name}`, other = replace ? replace(full, data) : undefined, kept = other || data;
    taps.set(full, { shape, data: kept });
    return kept;
  };
  const enc = under("encoder");
  let x = embedded(model, ids, enc, standIn);
  model.encoderLayers.forEach((L, i) => {
    const attn = under(`encoder.${i}.self_attn`), ff = under(`encoder.${i}.ff`);
    x = residual(model, x, attention(model, x, S, null, S, L.self, false, attn, model.kept("encoder", i)), S, L.norm1, attn);
    x = residual(model, x, feedForward(model, x, S, L.ff, ff), S, L.norm2, ff);
  });
  enc("out", x, [1, S, model.D]);
  const memory = x, dec = under("decoder");
  let y = embedded(model, input, dec);
  model.decoderLayers.forEach((L, i) => {
    const self = under(`decoder.${i}.self_attn`), cross = under(`decoder.${i}.cross_attn`), ff = under(`decoder.${i}.ff`);
    y = residual(model, y, attention(model, y, T, null, T, L.self, true, self, model.kept("decoder", i)), T, L.norm1, self);
    y = residual(model, y, attention(model, y, T, memory, S, L.cross, false, cross, model.kept("cross", i)), T, L.norm2, cross);
    y = residual(model, y, feedForward(model, y, T, L.ff, ff), T, L.norm3, ff);
  });
  dec("out", y, [1, T, model.D]);
  taps.set("logits", { shape: [1, T, model.V], data: linear(y, T, model.embed, null, model.D, model.V) });
  return taps;
}

/** A tap's shape and a look at its numbers, as lens/code.py's peek: the first `n`, the mean and the spread of the
    finite ones (population), how many are −∞. */
export function peek({ shape, data }, n = 6) {
  let count = 0, sum = 0;
  for (const v of data) if (Number.isFinite(v)) { count++; sum += v; }
  const mean = count ? sum / count : null;
  let square = 0;
  if (mean !== null) for (const v of data) if (Number.isFinite(v)) square += (v - mean) ** 2;
  const round = (v) => Math.round(v * 1e4) / 1e4;
  return { shape: [...shape], first: Array.from(data.subarray(0, n), round), mean: mean === null ? null : round(mean),
    std: mean === null ? null : round(Math.sqrt(square / count)), masked: data.length - count };
}
