// @ts-check
/* Attention Lens, the copy lab trained in the page: the tiny Transformer of `train.py --task copy` (training/lab.py's
   settings and caps) learning to copy random sequences of symbols, in the visitor's browser. The model is
   model/transformer.py's, post-LayerNorm, the output layer tied to the embedding; the loss is label-smoothed
   cross-entropy (0.1), the gradients come from backprop.js's hand-written backward pass, clipped to norm 1, and
   Adam (β 0.9, 0.98, ε 1e-9) follows the paper's warmup and inverse-square-root schedule. Every REPORT_EVERY steps
   it reports in ui/copylab.py's fields, which copylab.js draws: the loss, four held-out sequences copied, and the
   cross-attention of the first turning from uniform into a diagonal.

   What differs from the server's run: the random numbers (a seeded generator of its own, so the weights and the
   batches are not torch's), and the time limit, TIME_LIMIT_S. */
import { Tape, node } from "./backprop.js";
import { quantize } from "./inpage.js";

// training/tasks.py and training/lab.py
const PAD = 0, BOS = 1, EOS = 2, FIRST = 4, VOCAB = 24, MIN_LEN = 4, MAX_SEQ = 12, MAX_LEN = 16;
// Half the server's 512 pieces a step (training/lab.py's LAB_BATCH_TOKENS): 18 sequences, so that the default 300 steps fit
// in half a minute on a 2-core machine (bench/site.py); the copy is learned all the same.
const BATCH_TOKENS = 256;
export const CAPS = { n_layers: [1, 2], n_heads: [1, 4], d_model: [16, 64], steps: [10, 600], lr: [1e-4, 1e-2] };
const SMOOTHING = 0.1, CLIP = 1.0, BETAS = [0.9, 0.98], EPS = 1e-9, SHOWN = 4, REPORT_EVERY = 10;
export const TIME_LIMIT_S = 60;

/** A seeded generator of numbers in [0, 1) (mulberry32), for the weights and the batches. */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The settings, checked against the caps (training/lab.CopyLabSettings.validate); a message naming what to fix. */
export function checkedSettings(s) {
  for (const [name, [low, high]] of Object.entries(CAPS)) {
    const v = Number(s[name]);
    if (!Number.isFinite(v) || v < low || v > high || (name !== "lr" && !Number.isInteger(v))) {
      throw new Error(`${name} must be between ${low} and ${high}, got ${s[name]}`);
    }
  }
  if (s.d_model % s.n_heads) throw new Error(`d_model (${s.d_model}) must be divisible by n_heads (${s.n_heads})`);
  return { n_layers: Number(s.n_layers), n_heads: Number(s.n_heads), d_model: Number(s.d_model), lr: Number(s.lr), steps: Number(s.steps), seed: Number(s.seed || 0) };
}

/** The model's parameters: Xavier for matrices, zeros for biases, ones for LayerNorm's gains, N(0, D^-1/2) for the
    embedding (model/transformer.py's reset_parameters). */
function parameters(c, random) {
  const D = c.d_model, F = 2 * D, all = [];
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const param = (shape, fill) => { const p = node(Float32Array.from({ length: shape[0] * (shape[1] || 1) }, fill), shape); all.push(p); return p; };
  const matrix = (out, inDim) => { const a = Math.sqrt(6 / (out + inDim)); return param([out, inDim], () => (2 * random() - 1) * a); };
  const vector = (n, value) => param([n], () => value);
  const attention = () => ({ Wq: matrix(D, D), bq: vector(D, 0), Wk: matrix(D, D), bk: vector(D, 0), Wv: matrix(D, D), bv: vector(D, 0),
    Wo: matrix(D, D), bo: vector(D, 0) });
  const ff = () => ({ W1: matrix(F, D), b1: vector(F, 0), W2: matrix(D, F), b2: vector(D, 0) });
  const norm = () => ({ g: vector(D, 1), b: vector(D, 0) });
  const E = param([VOCAB, D], () => normal() / Math.sqrt(D));
  const encoder = [...Array(c.n_layers)].map(() => ({ self: attention(), ff: ff(), norm1: norm(), norm2: norm() }));
  const decoder = [...Array(c.n_layers)].map(() => ({ self: attention(), cross: attention(), ff: ff(), norm1: norm(), norm2: norm(), norm3: norm() }));
  const pe = new Float32Array(MAX_LEN * D);
  for (let p = 0; p < MAX_LEN; p++) for (let i = 0; i < D; i += 2) {
    const f = Math.exp(i * (-Math.log(10000) / D));
    pe[p * D + i] = Math.sin(p * f); pe[p * D + i + 1] = Math.cos(p * f);
  }
  return { E, encoder, decoder, pe, all, H: c.n_heads, D };
}

/** Multi-head attention of x over `memory` on the tape: its output and its weights (H, L, M). */
function attend(tape, p, x, memory, H, causal) {
  const a = tape.attention(tape.linear(x, p.Wq, p.bq), tape.linear(memory, p.Wk, p.bk), tape.linear(memory, p.Wv, p.bv), H, causal);
  return { out: tape.linear(a, p.Wo, p.bo), weights: a.weights };
}

/** The whole model on one pair, on the tape: the logits (T, V) and each decoder layer's cross-attention weights. */
function forward(tape, P, src, tgtIn) {
  const scale = Math.sqrt(P.D), ff = (x, f) => tape.linear(tape.relu(tape.linear(x, f.W1, f.b1)), f.W2, f.b2);
  let x = tape.embed(P.E, src, scale, P.pe);
  for (const l of P.encoder) {
    x = tape.layerNorm(tape.add(x, attend(tape, l.self, x, x, P.H, false).out), l.norm1.g, l.norm1.b);
    x = tape.layerNorm(tape.add(x, ff(x, l.ff)), l.norm2.g, l.norm2.b);
  }
  let y = tape.embed(P.E, tgtIn, scale, P.pe);
  const cross = [];
  for (const l of P.decoder) {
    y = tape.layerNorm(tape.add(y, attend(tape, l.self, y, y, P.H, true).out), l.norm1.g, l.norm1.b);
    const c = attend(tape, l.cross, y, x, P.H, false);
    cross.push(c.weights);
    y = tape.layerNorm(tape.add(y, c.out), l.norm2.g, l.norm2.b);
    y = tape.layerNorm(tape.add(y, ff(y, l.ff)), l.norm3.g, l.norm3.b);
  }
  return { logits: tape.linear(y, P.E, null), cross };
}

/** One random sequence to copy: the source (symbols, EOS), the decoder's input (BOS, symbols) and its target. */
function pair(random) {
  const n = MIN_LEN + Math.floor(random() * (MAX_SEQ - MIN_LEN + 1));
  const seq = Array.from({ length: n }, () => FIRST + Math.floor(random() * (VOCAB - FIRST)));
  return { src: [...seq, EOS], tgtIn: [BOS, ...seq], tgtOut: [...seq, EOS] };
}

/** One optimizer step on a batch: the loss averaged over its pieces, the gradients clipped, Adam. */
function trainStep(P, adam, batch, lr) {
  for (const p of P.all) p.g.fill(0);
  const count = batch.reduce((n, b) => n + b.tgtOut.length, 0);
  let loss = 0;
  for (const b of batch) {
    const tape = new Tape(), l = tape.crossEntropy(forward(tape, P, b.src, b.tgtIn).logits, b.tgtOut, SMOOTHING, count);
    loss += l.v[0];
    tape.backward(l);
  }
  let square = 0;
  for (const p of P.all) for (const g of p.g) square += g * g;
  const clip = Math.min(1, CLIP / (Math.sqrt(square) + 1e-6));
  adam.t += 1;
  const [b1, b2] = BETAS, c1 = 1 - b1 ** adam.t, c2 = 1 - b2 ** adam.t;
  P.all.forEach((p, k) => {
    const m = adam.m[k], v = adam.v[k];
    for (let i = 0; i < p.v.length; i++) {
      const g = p.g[i] * clip;
      m[i] = b1 * m[i] + (1 - b1) * g; v[i] = b2 * v[i] + (1 - b2) * g * g;
      p.v[i] -= (lr * m[i] / c1) / (Math.sqrt(v[i] / c2) + EPS);
    }
  });
  return loss;
}

/** The paper's schedule (training/loop.lr_at): linear warmup to `peak`, then 1/√step. */
const lrAt = (step, peak, warmup) => peak * Math.min(step / warmup, Math.sqrt(warmup / Math.max(step, 1)));

/** Greedy copy of `src` by the model as it is now. */
function copied(P, src) {
  const out = [BOS];
  while (out.length <= src.length + 1) {
    const { logits } = forward(new Tape(), P, src, out), V = VOCAB, last = logits.v.subarray((out.length - 1) * V, out.length * V);
    let best = 0;
    for (let c = 1; c < V; c++) if (last[c] > last[best]) best = c;
    if (best === EOS) break;
    out.push(best);
  }
  return out.slice(1);
}

const letters = (ids) => ids.filter((i) => i >= FIRST).map((i) => String.fromCharCode(65 + i - FIRST)).join(" ");
const labels = (ids) => ids.map((i) => ({ [BOS]: "<s>", [EOS]: "</s>", [PAD]: "<pad>" })[i] || String.fromCharCode(65 + i - FIRST));

/** A progress report (ui/copylab.progress_payload's fields) of the model on the held-out sequences. */
function report(P, c, held, state) {
  const examples = held.map((h) => [letters(h.src), letters(h.tgtOut), letters(copied(P, h.src))]);
  const first = held[0], { cross } = forward(new Tape(), P, first.src, first.tgtIn);
  const T = first.tgtIn.length, S = first.src.length, maps = new Float32Array(c.n_layers * c.n_heads * T * S);
  cross.forEach((w, l) => maps.set(w, l * c.n_heads * T * S));
  const words = (tokens) => tokens.map((t, i) => [t, [i]]);
  const src = labels(first.src), tgt = labels(first.tgtOut);
  return {
    id: Date.now() + state.step, step: state.step, total: c.steps, elapsed: Math.round(state.elapsed * 100) / 100, limit: TIME_LIMIT_S,
    losses: state.losses.slice(), examples, accuracy: examples.filter((e) => e[1] === e[2]).length / examples.length,
    done: state.done, stopped_by_time: state.stopped, label_smoothing: SMOOTHING, vocab_size: VOCAB,
    map: { layers: { cross: c.n_layers }, heads: c.n_heads, sentences: [{ tokens: { src, tgt, in: [] },
      words: { src: words(src), tgt: words(tgt), in: [] }, maps: { cross: quantize(maps) } }] },
  };
}

/** Train with `settings` (checkedSettings), calling `onReport(report)` every REPORT_EVERY steps and at the end, and
    letting the page draw between steps; `stop()` true ends it early. Resolves to the last report. */
export async function trainCopy(settings, onReport, stop = () => false) {
  const c = checkedSettings(settings), random = generator(1234 + c.seed), P = parameters(c, random);
  const heldRandom = generator(99), held = [...Array(SHOWN)].map(() => pair(heldRandom));
  const adam = { t: 0, m: P.all.map((p) => new Float32Array(p.v.length)), v: P.all.map((p) => new Float32Array(p.v.length)) };
  const warmup = Math.max(1, Math.min(100, Math.floor(c.steps / 4))), perBatch = Math.floor(BATCH_TOKENS / (MAX_SEQ + 2));
  const state = { step: 0, losses: [], elapsed: 0, done: false, stopped: false }, start = performance.now();
  let last = null;
  while (!state.done) {
    const batch = [...Array(perBatch)].map(() => pair(random));
    const loss = trainStep(P, adam, batch, lrAt(state.step + 1, c.lr, warmup));
    state.step += 1;
    state.losses.push([state.step, Math.round(loss * 1e4) / 1e4]);
    state.elapsed = (performance.now() - start) / 1000;
    state.stopped = state.elapsed >= TIME_LIMIT_S || stop();
    state.done = state.step >= c.steps || state.stopped;
    if (state.step % REPORT_EVERY === 0 || state.done) {
      last = report(P, c, held, state);
      onReport(last);
      await new Promise((r) => setTimeout(r, 0)); // the page draws the report
    }
  }
  return last;
}
