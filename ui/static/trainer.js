// @ts-check
// twin of: lab/model.py, lab/train.py (tests/test_lab_parity.py)
/* Attention Lens, the page's one trainer: a tiny encoder-decoder learning a toy task (copy or reverse a sequence of
   symbols) in the visitor's browser, with backprop.js's backward pass written by hand. Built as the paper has it by
   default (Post-LN, the causal mask, ÷√d_k, sinusoidal positions, ×√d_model, the output tied to the embedding,
   heads split by transpose, residuals, queries from the decoder in cross-attention, label smoothing 0.1, warm-up),
   or with any of these changed: the lab's switches (SWITCHES; the lab's experiments in experiments.json).

   lab/ is its PyTorch twin: the same generator (mulberry32), the weights drawn in the same order, the same batches,
   loss, clipping and Adam (β 0.9, 0.98, ε 1e-9), so that both start and step alike (tests/test_lab_parity.py).
   It imports nothing but backprop.js, so that a worker can run it (labworker.js). The lab (lab.js) trains two runs
   of it side by side; the copy lab (copytrain.js) runs it at the paper's settings. */
import { Tape, node } from "./backprop.js";

// lab/tasks.py
const PAD = 0, BOS = 1, EOS = 2, FIRST = 4, VOCAB = 24, MIN_LEN = 4, MAX_SEQ = 12, MAX_LEN = 16, HELD_OUT_SEED = 99;
// lab/train.py: 18 sequences a step (at most 256 pieces)
const PER_BATCH = Math.floor(256 / (MAX_SEQ + 2)), CLIP = 1.0, BETAS = [0.9, 0.98], EPS = 1e-9;
export const DIVERGED = 1000; // a loss past it has diverged (lab/train.py's DIVERGED)
export const REPORT_EVERY = 10, EVAL_EVERY = 50, HELD = 16, SHOWN = 4, VOCAB_SIZE = VOCAB;
export const TIME_LIMIT_S = 120; // a run that outlasts it stops and says so
// lab/settings.py: inclusive bounds, each with its reason, and the switches (the first value is the paper's)
/** @type {Record<string, [number, number, string]>} */
export const BOUNDS = {
  n_layers: [1, 6, "six layers is the paper's depth; more would take minutes in a browser"],
  n_heads: [1, 8, "eight heads is the paper's count"],
  d_model: [8, 64, "a toy task needs no more than 64 numbers a piece, and more is slower in a browser"],
  steps: [10, 1000, "a thousand steps is about a minute in a browser"],
  lr: [1e-5, 1.0, "beyond 1 every run diverges at once"],
  warmup: [1, 1000, "the warm-up cannot outlast the run's longest length"],
  smoothing: [0.0, 0.5, "more smoothing than 0.5 teaches the model to be unsure"],
  seed: [0, 2 ** 31 - 1, "a 32-bit seed"],
};
/** @type {Record<string, any[]>} */
export const SWITCHES = {
  task: ["copy", "reverse"], norm: ["post", "pre", "none"], causal: [true, false], scale: [true, false],
  positions: ["sinusoidal", "learned", "none"], embed_scale: [true, false], tied: [true, false],
  split: ["transpose", "view"], residual: [true, false], cross: ["paper", "swapped"], schedule: ["warmup", "constant"],
};
export const DEFAULTS = { task: "copy", n_layers: 1, n_heads: 4, d_model: 32, steps: 300, lr: 1e-2, warmup: 75,
  smoothing: 0.1, seed: 0, norm: "post", causal: true, scale: true, positions: "sinusoidal", embed_scale: true,
  tied: true, split: "transpose", residual: true, cross: "paper", schedule: "warmup" };

/** A seeded generator of numbers in [0, 1) (mulberry32), for the weights and the batches (lab/random.py). */
export function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One run's settings: DEFAULTS overlaid with `s`, every field checked (lab/settings.LabSettings.validate); the
    message names the field, its bounds and the reason. */
export function labSettings(s) {
  const unknown = Object.keys(s).filter((k) => !(k in DEFAULTS));
  if (unknown.length) throw new Error(`unknown setting "${unknown[0]}"; the settings are ${Object.keys(DEFAULTS).join(", ")}`);
  const c = { ...DEFAULTS, ...s };
  for (const [name, [low, high, why]] of Object.entries(BOUNDS)) {
    const v = c[name], whole = name !== "lr" && name !== "smoothing";
    if (typeof v !== "number" || !Number.isFinite(v) || (whole && !Number.isInteger(v))) {
      throw new Error(`${name} must be a ${whole ? "whole " : ""}number, got ${JSON.stringify(v)}`);
    }
    if (v < low || v > high) throw new Error(`${name} must be from ${low} to ${high} (${why}), got ${v}`);
  }
  for (const [name, values] of Object.entries(SWITCHES)) {
    if (!values.includes(c[name])) throw new Error(`${name} must be one of ${values.join(", ")}, got ${JSON.stringify(c[name])}`);
  }
  if (c.d_model % c.n_heads) throw new Error(`d_model (${c.d_model}) must be divisible by n_heads (${c.n_heads})`);
  if (c.d_model % 2) throw new Error(`d_model must be even (the positional encoding pairs sines and cosines), got ${c.d_model}`);
  return c;
}

/** The model's parameters, drawn in lab/model.py's order: Xavier-uniform matrices, zero biases, unit LayerNorm gains,
    N(0, 1/D) embeddings; then the parameters only some variants use (the final norms of Pre-LN, an untied output
    matrix, learned positions), so that every variant starts from the same numbers. */
function parameters(c, random) {
  const D = c.d_model, F = 2 * D, all = [];
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const param = (shape, fill) => { const p = node(Float64Array.from({ length: shape[0] * (shape[1] || 1) }, fill), shape); all.push(p); return p; };
  const matrix = (out, inDim) => { const a = Math.sqrt(6 / (out + inDim)); return param([out, inDim], () => (2 * random() - 1) * a); };
  const vector = (n, value) => param([n], () => value);
  const normal = (rows) => param([rows, D], () => gauss() / Math.sqrt(D));
  const attention = () => ({ Wq: matrix(D, D), bq: vector(D, 0), Wk: matrix(D, D), bk: vector(D, 0), Wv: matrix(D, D), bv: vector(D, 0),
    Wo: matrix(D, D), bo: vector(D, 0) });
  const ff = () => ({ W1: matrix(F, D), b1: vector(F, 0), W2: matrix(D, F), b2: vector(D, 0) });
  const norm = () => ({ g: vector(D, 1), b: vector(D, 0) });
  const E = normal(VOCAB);
  const encoder = [...Array(c.n_layers)].map(() => ({ self: attention(), ff: ff(), norm1: norm(), norm2: norm() }));
  const decoder = [...Array(c.n_layers)].map(() => ({ self: attention(), cross: attention(), ff: ff(), norm1: norm(), norm2: norm(), norm3: norm() }));
  const encoderNorm = norm(), decoderNorm = norm(), output = normal(VOCAB), learned = normal(MAX_LEN);
  const pe = new Float64Array(MAX_LEN * D);
  for (let p = 0; p < MAX_LEN; p++) for (let i = 0; i < D; i += 2) {
    const f = Math.exp(i * (-Math.log(10000) / D));
    pe[p * D + i] = Math.sin(p * f); pe[p * D + i + 1] = Math.cos(p * f);
  }
  return { E, encoder, decoder, encoderNorm, decoderNorm, output, learned, pe, all, D };
}

/** Multi-head attention of `queries` over `keysValues` on the tape: its output and its weights (H, L, M). */
function attend(tape, p, queries, keysValues, c, causal) {
  const a = tape.attention(tape.linear(queries, p.Wq, p.bq), tape.linear(keysValues, p.Wk, p.bk), tape.linear(keysValues, p.Wv, p.bv),
    c.n_heads, causal, { scale: c.scale, view: c.split === "view" });
  return { out: tape.linear(a, p.Wo, p.bo), weights: a.weights };
}

/** Add & Norm as the switches build it (lab/model.sublayer): Post-LN norm(x + f(x)), Pre-LN x + f(norm(x)), no norm;
    the residual (x +) present or not. */
function sublayer(tape, c, x, f, n) {
  if (c.norm === "pre") { const out = f(tape.layerNorm(x, n.g, n.b)); return c.residual ? tape.add(x, out) : out; }
  const out = c.residual ? tape.add(x, f(x)) : f(x);
  return c.norm === "post" ? tape.layerNorm(out, n.g, n.b) : out;
}

/** The whole model on one pair, on the tape: the logits (T, V) and each decoder layer's cross-attention weights. */
function forward(tape, P, c, src, tgtIn) {
  const scale = c.embed_scale ? Math.sqrt(P.D) : 1, pe = { sinusoidal: P.pe, learned: P.learned, none: null }[c.positions];
  const ff = (x, f) => tape.linear(tape.relu(tape.linear(x, f.W1, f.b1)), f.W2, f.b2);
  let x = tape.embed(P.E, src, scale, pe);
  for (const l of P.encoder) {
    x = sublayer(tape, c, x, (h) => attend(tape, l.self, h, h, c, false).out, l.norm1);
    x = sublayer(tape, c, x, (h) => ff(h, l.ff), l.norm2);
  }
  if (c.norm === "pre") x = tape.layerNorm(x, P.encoderNorm.g, P.encoderNorm.b);
  let y = tape.embed(P.E, tgtIn, scale, pe);
  const cross = [];
  for (const l of P.decoder) {
    y = sublayer(tape, c, y, (h) => attend(tape, l.self, h, h, c, c.causal).out, l.norm1);
    y = sublayer(tape, c, y, (h) => {
      // the paper: queries from the decoder; swapped (the tutorials' error): queries from the memory's first T rows
      const a = c.cross === "paper" ? attend(tape, l.cross, h, x, c, false) : attend(tape, l.cross, tape.rows(x, h.shape[0]), h, c, false);
      cross.push(a.weights);
      return a.out;
    }, l.norm2);
    y = sublayer(tape, c, y, (h) => ff(h, l.ff), l.norm3);
  }
  if (c.norm === "pre") y = tape.layerNorm(y, P.decoderNorm.g, P.decoderNorm.b);
  return { logits: tape.linear(y, c.tied ? P.E : P.output, null), cross };
}

/** One example (lab/tasks.pair): the source (symbols, EOS), the decoder's input (BOS, answer) and its target. */
function pair(random, task) {
  const n = MIN_LEN + Math.floor(random() * (MAX_SEQ - MIN_LEN + 1));
  const seq = Array.from({ length: n }, () => FIRST + Math.floor(random() * (VOCAB - FIRST)));
  const answer = task === "reverse" ? [...seq].reverse() : seq;
  return { src: [...seq, EOS], tgtIn: [BOS, ...answer], tgtOut: [...answer, EOS] };
}

/** The paper's schedule (lab/train.lr_at): linear warm-up to the peak, then 1/√step; or the rate held constant. */
export const lrAt = (step, c) => (c.schedule === "constant" ? c.lr : c.lr * Math.min(step / c.warmup, Math.sqrt(c.warmup / Math.max(step, 1))));

/** A run ready to step: its model, Adam's moments and its generator, which drew the weights and now draws batches. */
export function startRun(settings) {
  const c = labSettings(settings), random = generator(1234 + c.seed), P = parameters(c, random);
  const adam = { t: 0, m: P.all.map((p) => new Float64Array(p.v.length)), v: P.all.map((p) => new Float64Array(p.v.length)) };
  return { c, P, adam, random, step: 0 };
}

/** The gradients of one batch (lab/train.loss_of): the loss summed over its pieces and divided by their count. */
function gradients(run, batch) {
  const { P, c } = run, count = batch.reduce((n, b) => n + b.tgtOut.length, 0);
  for (const p of P.all) p.g.fill(0);
  let loss = 0;
  for (const b of batch) {
    const tape = new Tape(), l = tape.crossEntropy(forward(tape, P, c, b.src, b.tgtIn).logits, b.tgtOut, c.smoothing, count);
    loss += l.v[0];
    tape.backward(l);
  }
  let square = 0;
  for (const p of P.all) for (const g of p.g) square += g * g;
  return { loss, norm: Math.sqrt(square) };
}

/** One step: a batch drawn, its gradients clipped to norm CLIP, Adam at the schedule's rate. A loss past DIVERGED
    (it starts near ln 24 ≈ 3.2) or a loss or gradient that is not a number stops the run before it touches the
    weights ({diverged: true}). */
export function trainStep(run) {
  const batch = [...Array(PER_BATCH)].map(() => pair(run.random, run.c.task)), { loss, norm } = gradients(run, batch);
  run.step += 1;
  if (!Number.isFinite(loss) || !Number.isFinite(norm) || loss > DIVERGED) return { loss, norm, diverged: true };
  const clip = Math.min(1, CLIP / (norm + 1e-6)), lr = lrAt(run.step, run.c), { adam } = run;
  adam.t += 1;
  const [b1, b2] = BETAS, c1 = 1 - b1 ** adam.t, c2 = 1 - b2 ** adam.t;
  run.P.all.forEach((p, k) => {
    const m = adam.m[k], v = adam.v[k];
    for (let i = 0; i < p.v.length; i++) {
      const g = p.g[i] * clip;
      p.g[i] = g;
      m[i] = b1 * m[i] + (1 - b1) * g; v[i] = b2 * v[i] + (1 - b2) * g * g;
      p.v[i] -= (lr * m[i] / c1) / (Math.sqrt(v[i] / c2) + EPS);
    }
  });
  return { loss, norm, diverged: false };
}

/** The answer written piece by piece, each piece fed back (inference, no teacher): at most src.length pieces. */
export function greedy(run, src) {
  const out = [BOS];
  while (out.length <= src.length) {
    const { logits } = forward(new Tape(), run.P, run.c, src, out), V = VOCAB, last = logits.v.subarray((out.length - 1) * V, out.length * V);
    let best = 0;
    for (let c = 1; c < V; c++) if (last[c] > last[best]) best = c;
    if (best === EOS) break;
    out.push(best);
  }
  return out.slice(1);
}

/** The held-out sequences every run is judged on (lab/tasks.held_out). */
export const heldOut = (task, count = HELD) => { const r = generator(HELD_OUT_SEED); return [...Array(count)].map(() => pair(r, task)); };

/** Teacher-forced accuracy (the share of pieces predicted right given the true answer so far) and greedy accuracy
    (the share of sequences written exactly right from the model's own pieces), as lab/train.accuracy. */
export function accuracy(run, pairs) {
  let right = 0, total = 0, exact = 0;
  for (const p of pairs) {
    const { logits } = forward(new Tape(), run.P, run.c, p.src, p.tgtIn);
    p.tgtOut.forEach((target, r) => {
      const row = logits.v.subarray(r * VOCAB, (r + 1) * VOCAB);
      let best = 0;
      for (let k = 1; k < VOCAB; k++) if (row[k] > row[best]) best = k;
      right += best === target ? 1 : 0; total += 1;
    });
    const written = greedy(run, p.src);
    exact += written.length === p.tgtOut.length - 1 && written.every((x, i) => x === p.tgtOut[i]) ? 1 : 0;
  }
  return [right / total, exact / pairs.length];
}

export const letters = (ids) => ids.filter((i) => i >= FIRST).map((i) => String.fromCharCode(65 + i - FIRST)).join(" ");
export const labels = (ids) => ids.map((i) => ({ [BOS]: "<s>", [EOS]: "</s>", [PAD]: "<pad>" })[i] || String.fromCharCode(65 + i - FIRST));

/** The outputs on the first SHOWN held-out sequences and the first one's cross-attention, layer by layer (H, T, S). */
export function finalLook(run, held) {
  const shown = held.slice(0, SHOWN), first = shown[0], { cross } = forward(new Tape(), run.P, run.c, first.src, first.tgtIn);
  return { examples: shown.map((h) => [letters(h.src), letters(h.tgtOut), letters(greedy(run, h.src))]),
    cross, src: labels(first.src), tgt: labels(first.tgtOut), tgtIn: labels(first.tgtIn), heads: run.c.n_heads, wiring: run.c.cross };
}

/** Train one run, calling `onReport(report)` every REPORT_EVERY steps and at the end and letting the page (or the
    worker's messages) through between them; `stop()` true ends it early, as does TIME_LIMIT_S or a diverged step.
    A report: {step, total, elapsed, losses [[step, loss]], norms [[step, |g|]], accuracy [[step, forced, greedy]],
    done, stopped, diverged_at, last (finalLook's, at the end)}. Resolves to the last report. */
export async function train(settings, onReport, stop = () => false, limitS = TIME_LIMIT_S) {
  const run = startRun(settings), held = heldOut(run.c.task), start = performance.now();
  const report = { step: 0, total: run.c.steps, elapsed: 0, losses: [], norms: [], accuracy: [], done: false, stopped: false,
    diverged_at: null, last: null, settings: run.c };
  while (!report.done) {
    const { loss, norm, diverged } = trainStep(run), step = run.step;
    report.step = step;
    report.elapsed = (performance.now() - start) / 1000;
    if (diverged) report.diverged_at = step;
    report.stopped = !diverged && step < run.c.steps && (report.elapsed >= limitS || stop());
    report.done = diverged || report.stopped || step >= run.c.steps;
    if (!diverged && (step % REPORT_EVERY === 0 || report.done)) { report.losses.push([step, loss]); report.norms.push([step, norm]); }
    if (!diverged && (step % EVAL_EVERY === 0 || report.done)) report.accuracy.push([step, ...accuracy(run, held)]);
    if (step % REPORT_EVERY === 0 || report.done) {
      if (report.done) report.last = finalLook(run, held);
      onReport({ ...report, losses: report.losses.slice(), norms: report.norms.slice(), accuracy: report.accuracy.slice() });
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  return report;
}
