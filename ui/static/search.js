// @ts-check
// twin of: generation/search.py, generation/bans.py (tests/test_site.py)
/* Attention Lens, the search in the page: greedy and beam search over the page's Transformer (transformer.js),
   step for step the rules of generation/search.py and generation/bans.py, so that the page writes what the
   server writes. Padding and BOS are never written; with no_repeat_ngram = n no n pieces in a row twice.
   A beam search keeps the K best prefixes, scores a finished one sum(log p) / length ** length_penalty, and stops
   once its best live prefix cannot beat the worst of K finished ones.

   Both return the pieces written (ending in EOS where the model ended) and, for the maps, every step's attention
   rows and the probability of the piece written, from the model's own distribution before any ban (what the
   server reads in its teacher-forced pass). */
/** The bans of one row in place in `logits`: pad and BOS, and the pieces that would repeat an n-gram of
    `tokens` (BOS first). */
export function ban(logits, tokens, config, n) {
  logits[config.pad_id] = -Infinity;
  logits[config.bos_id] = -Infinity;
  const w = tokens.length - 1; // pieces written
  if (!n || tokens.length <= n) return logits;
  for (let g = 1; g + n - 1 <= w; g++) { // the n-gram tokens[g .. g+n-1]
    let seen = true;
    for (let j = 0; j < n - 1 && seen; j++) seen = tokens[g + j] === tokens[w - (n - 1) + 1 + j];
    if (seen) logits[tokens[g + n - 1]] = -Infinity;
  }
  return logits;
}

/** log_softmax of a row (a new array). */
export function logSoftmax(row) {
  let m = -Infinity;
  for (const v of row) if (v > m) m = v;
  let s = 0;
  for (const v of row) if (v !== -Infinity) s += Math.exp(v - m);
  const lse = m + Math.log(s), out = new Float32Array(row.length);
  for (let i = 0; i < row.length; i++) out[i] = row[i] - lse;
  return out;
}

/** logsumexp of a row as (its largest entry, the log of the sum of exp(z - that)). */
function logSumExp(logits) {
  let m = -Infinity, s = 0;
  for (let i = 0; i < logits.length; i++) if (logits[i] > m) m = logits[i];
  for (let i = 0; i < logits.length; i++) s += Math.exp(logits[i] - m);
  return [m, Math.log(s)];
}

/** The probability of `token` under the model's own logits (before any ban): exp(z_token - logsumexp(z)). */
function probOf(logits, token) {
  const [m, ls] = logSumExp(logits);
  return Math.exp(logits[token] - m - ls);
}

/** The k largest entries of a row, best first: [[value, index]]; the lower index first among equals. */
export function topk(row, k) {
  const best = [];
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (best.length === k && !(v > best[k - 1][0])) continue;
    let j = best.length < k ? best.length : k - 1; // its place before it moves up: a new last, or the last's
    while (j > 0 && v > best[j - 1][0]) { best[j] = best[j - 1]; j--; }
    best[j] = [v, i];
  }
  return best;
}

/** Every step's rows and probability of the pieces `out` written after `src`'s encoding: the decoder read over
    its own output, one cached step a piece (what a teacher-forced pass computes); `read(name, value, step)` sees
    what transformer.js's step offers. */
export function replay(model, enc, out, read) {
  const cache = model.cache(out.length), steps = [];
  let previous = model.config.bos_id;
  for (const token of out) {
    const t = steps.length, s = model.step(enc, cache, previous, read ? (name, value) => read(name, value, t) : undefined);
    steps.push({ self: s.selfRows, cross: s.crossRows, prob: probOf(s.logits, token) });
    previous = token;
  }
  return steps;
}

/** Greedy: the likeliest piece at every step until EOS or `maxNew` pieces. */
export function greedy(model, enc, maxNew, noRepeat) {
  const config = model.config, cache = model.cache(maxNew), tokens = [config.bos_id], steps = [];
  for (let t = 0; t < maxNew; t++) {
    const s = model.step(enc, cache, tokens[tokens.length - 1]);
    const logits = ban(s.logits.slice(), tokens, config, noRepeat);
    let next = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[next]) next = i;
    steps.push({ self: s.selfRows, cross: s.crossRows, prob: probOf(s.logits, next) });
    tokens.push(next);
    if (next === config.eos_id) break;
  }
  return { out: tokens.slice(1), steps };
}

/** Beam search with K beams. Each beam keeps the attention rows of its steps and the probability of each piece
    it wrote (under the model's own logits, before any ban), so the winner's maps need no second pass. */
export function beam(model, enc, K, lengthPenalty, maxNew, noRepeat) {
  const config = model.config, eos = config.eos_id;
  let beams = [{ tokens: [config.bos_id], score: 0, cache: model.cache(maxNew), steps: [] }];
  const finished = []; // {score, ids, steps}, best first, at most K
  const offer = (score, ids, steps) => {
    finished.push({ score, ids, steps });
    finished.sort((a, b) => b.score - a.score);
    if (finished.length > K) finished.length = K;
  };
  let done = false;
  for (let t = 0; t < maxNew && !done; t++) {
    const cands = [], steps = model.stepMany(enc, beams.map((b) => b.cache), beams.map((b) => b.tokens[b.tokens.length - 1]));
    beams.forEach((b, k) => {
      const s = steps[k]; // every beam's step in one pass: each weight read once a step
      const [m, ls] = logSumExp(s.logits); // before the bans: what a teacher-forced pass reads
      const logp = logSoftmax(ban(s.logits, b.tokens, config, noRepeat));
      for (const [v, token] of topk(logp, 2 * K)) {
        cands.push({ score: b.score + v, from: k, token, step: { self: s.selfRows, cross: s.crossRows, prob: Math.exp(s.logits[token] - m - ls) } });
      }
    });
    cands.sort((a, b) => b.score - a.score || a.from - b.from);
    const top = cands.slice(0, 2 * K);
    const norm = (t + 1) ** lengthPenalty;
    top.slice(0, K).forEach((c) => {
      if (c.token === eos && c.score > -Infinity) offer(c.score / norm, beams[c.from].tokens.slice(1).concat(eos), beams[c.from].steps.concat(c.step));
    });
    const live = top.filter((c) => c.token !== eos).slice(0, K);
    if (finished.length === K && live.length && live[0].score / norm <= finished[K - 1].score) { done = true; break; }
    const used = new Set(); // a beam with two children: the second reads a copy of its cache
    beams = live.map((c) => {
      const parent = beams[c.from], cache = used.has(c.from) ? model.copyCache(parent.cache) : parent.cache;
      used.add(c.from);
      return { tokens: parent.tokens.concat(c.token), score: c.score, cache, steps: parent.steps.concat(c.step) };
    });
  }
  if (!done) for (const b of beams) offer(b.score / (b.tokens.length - 1) ** lengthPenalty, b.tokens.slice(1), b.steps);
  return finished.length ? { out: finished[0].ids, steps: finished[0].steps } : { out: [], steps: [] };
}

/** The most new pieces a search takes for a source of S pieces, as Translator._max_new_tokens. */
export function maxNewTokens(config, S, asked) {
  return asked == null ? Math.max(1, Math.min(2 * S + 10, config.max_len)) : Math.max(1, Math.min(asked, config.max_len));
}
