// @ts-check
// twin of: lens/trace.py, ui/step_through.py (tests/test_site_views.py)
/* Attention Lens, the step view answered in the page: what ui/step_through.py's run, force and hypothesis answer,
   computed by the page's model, so that stepthrough.js draws the page's answer as it draws the server's.

   tracedSearch is lens/trace.py's trace: the search of generation/search.py written out row by row, with a record of
   every step (the model's own distribution before any ban, its attention rows) and, with beams, every hypothesis
   the search kept (the beam tree) and the ranked n-best list. A forced prefix fixes the first pieces (what-if). */
import { outputPayload, quantize, routed, typedRefusal, unsure, wordsOf, written } from "./inpage.js";
import { ban, logSoftmax, topk } from "./search.js";
import { splitSentences } from "./sentences.js";

const TOP_K = 10, MAX_CHARACTERS = 400, MAX_WORD_CHARACTERS = 40; // ui/step_through.py's
const UNK_ID = 3; // tokenizer/: <pad> 0, <s> 1, </s> 2, <unk> 3

/** One step of every row at once: each row's logits and its record (the model's log-probabilities before any
    ban, its attention rows). */
function stepsOf(model, enc, rows) {
  return model.stepMany(enc, rows.map((r) => r.cache), rows.map((r) => r.tokens[r.tokens.length - 1]))
    .map((s) => ({ s, record: { logp: logSoftmax(s.logits), self: s.selfRows, cross: s.crossRows } }));
}

/** The beam tree's nodes (lens/trace.BeamNode) and how a node is made from its parent. */
function tree(lengthPenalty) {
  const nodes = [{ id: 0, parent: -1, step: -1, ids: [], log_prob: 0, score: 0, status: "pruned", record: null }];
  const child = (step, parent, token, logProb) => {
    const n = { id: nodes.length, parent: parent.id, step, ids: parent.ids.concat(token), log_prob: logProb,
      score: logProb / (parent.ids.length + 1) ** lengthPenalty, status: "pruned", record: null };
    nodes.push(n);
    return n;
  };
  return { nodes, child };
}

/** Greedy (K = 1) or beam search over `enc` with a forced `prefix`, recorded: {out, nodes, winner}. Each node holds
    the record of the step its row took (node.record), so the winner's path gives every output step's record. */
export function tracedSearch(model, enc, K, lengthPenalty, maxNew, noRepeat, prefix) {
  const config = model.config, eos = config.eos_id, { nodes, child } = tree(lengthPenalty);
  let rows = [{ tokens: [config.bos_id], score: 0, cache: model.cache(maxNew), node: nodes[0] }];
  const finished = []; // {score, ids}, best first, at most K
  const offer = (score, ids) => { finished.push({ score, ids }); finished.sort((a, b) => b.score - a.score); finished.length = Math.min(finished.length, K); };
  let done = false, steps = 0;
  for (let t = 0; t < maxNew && !done && rows.length; t++, steps++) {
    const forced = t < prefix.length ? prefix[t] : null, cands = [], stepped = stepsOf(model, enc, rows);
    rows.forEach((r, k) => {
      const { s, record } = stepped[k];
      r.node.record = record;
      let logp = logSoftmax(ban(s.logits.slice(), r.tokens, config, forced === null ? noRepeat : 0));
      if (forced !== null) { const kept = logp[forced]; logp = new Float32Array(logp.length).fill(-Infinity); logp[forced] = kept; }
      if (K === 1) { // greedy_search: the likeliest piece, or the forced one
        let next = forced ?? 0;
        if (forced === null) for (let i = 1; i < logp.length; i++) if (logp[i] > logp[next]) next = i;
        cands.push({ score: r.score + logp[next], from: k, token: next });
      } else for (const [v, token] of topk(logp, 2 * K)) cands.push({ score: r.score + v, from: k, token });
    });
    cands.sort((a, b) => (b.score - a.score) || a.from - b.from);
    const norm = (t + 1) ** lengthPenalty, top = cands.slice(0, 2 * K);
    if (K > 1) for (const c of top.slice(0, K)) { // EOS among the K best ends a hypothesis (search._finish_ended)
      if (c.token !== eos || c.score === -Infinity) continue;
      offer(c.score / norm, rows[c.from].tokens.slice(1).concat(eos));
      Object.assign(child(t, rows[c.from].node, eos, c.score), { status: "finished", score: c.score / norm });
    }
    const live = K === 1 ? top : top.filter((c) => c.token !== eos && c.score > -Infinity).slice(0, K);
    live.forEach((c) => { c.node = child(t, rows[c.from].node, c.token, c.score); });
    if (K > 1 && finished.length === K && (!live.length || live[0].score / norm <= finished[K - 1].score)) done = true;
    const used = new Set(); // a row with two children: the second reads a copy of its cache
    rows = live.map((c) => {
      const parent = rows[c.from], cache = used.has(c.from) ? model.copyCache(parent.cache) : parent.cache;
      used.add(c.from);
      return { tokens: parent.tokens.concat(c.token), score: c.score, cache, node: c.node };
    });
    if (K === 1 && rows[0].tokens[rows[0].tokens.length - 1] === eos) { offer(rows[0].score, rows[0].tokens.slice(1)); rows = []; }
  }
  if (!done) for (const r of rows) { // out of steps: the live beams compete as they are (search._out_of_steps)
    const score = K === 1 ? r.score : r.score / steps ** lengthPenalty;
    offer(score, r.tokens.slice(1));
    if (K > 1) Object.assign(r.node, { status: "finished", score });
  }
  const out = finished.length ? finished[0].ids : [];
  return { out, nodes, ...finishTree(nodes, out, K) };
}

/** Every node's fate (lens/trace._finish_tree) and the n-best node ids; the winner's path, root first. */
function finishTree(nodes, out, K) {
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const winner = [...nodes].reverse().find((n) => same(n.ids, out)) || nodes[0];
  for (const n of nodes) if (n.parent >= 0 && nodes[n.parent].status !== "finished") nodes[n.parent].status = "expanded";
  const path = [];
  for (let n = winner; ; n = nodes[n.parent]) { n.status = "winner"; path.unshift(n); if (n.parent < 0) break; }
  const ended = nodes.filter((n) => n.status === "finished" || n === winner).sort((a, b) => b.score - a.score);
  return { path, nbest: K > 1 ? ended.slice(0, K).map((n) => n.id) : [] };
}

/** Entropy of a distribution given as log-probabilities, in nats. */
function entropy(logp) {
  let h = 0;
  for (const l of logp) if (l > -Infinity) h -= Math.exp(l) * l;
  return h;
}

const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;

/** The step view's trace (ui/step_through.trace_payload) of a traced search of source pieces `ids`. */
export function tracePayload(lens, ids, found, K, lengthPenalty, prefixLength) {
  const { bpe, config } = lens, L = config.n_decoder_layers, H = config.n_heads, S = ids.length, out = found.out;
  const T = out.length, records = found.path.slice(0, T).map((n) => n.record), piece = (id) => bpe.labels([id])[0];
  const cross = new Float32Array(T * L * H * S), decoder = new Float32Array(T * L * H * T);
  records.forEach((r, step) => {
    r.cross.forEach((w, l) => cross.set(w, (step * L + l) * H * S));
    r.self.forEach((w, l) => { for (let h = 0; h < H; h++) decoder.set(w.subarray(h * (step + 1), (h + 1) * (step + 1)), ((step * L + l) * H + h) * T); });
  });
  const src = bpe.labels(ids), tokens = bpe.labels(out);
  return {
    translation: written(lens, out), num_beams: K, length_penalty: lengthPenalty,
    prefix_length: prefixLength, src: { tokens: src, words: wordsOf(bpe, ids, src) }, tokens, ids: out,
    probs: records.map((r, i) => round(Math.exp(r.logp[out[i]]), 4)), entropy: records.map((r) => round(entropy(r.logp), 3)),
    forced: out.map((_, i) => i < prefixLength),
    top: records.map((r) => topk(r.logp, TOP_K).map(([l, id]) => [piece(id), id, round(Math.exp(l), 4)])),
    cross: quantize(cross), decoder: quantize(decoder),
    beam: K > 1 ? found.nodes.map((n) => ({ id: n.id, parent: n.parent, step: n.step, token: n.ids.length ? piece(n.ids[n.ids.length - 1]) : "<s>",
      ids: n.ids, log_prob: round(n.log_prob, 3), score: round(n.score, 3), status: n.status })) : [],
    nbest: found.nbest,
  };
}

/** The one sentence the view steps through (ui/runtime.one_sentence), or a refusal in the server's words. */
function oneSentence(text) {
  const words = { what: "app.what.step" }, refuse = (key, values) => { throw Object.assign(new Error(key), { answer: { error: key, error_key: key, error_values: values, error_words: words } }); };
  if (typeof text !== "string" || !text.trim()) refuse("app.refusal.one_empty", {});
  if (text.length > MAX_CHARACTERS) refuse("app.refusal.one_too_long", { characters: text.length.toLocaleString("en"), most: String(MAX_CHARACTERS) });
  const sentences = splitSentences(text);
  if (sentences.length !== 1) refuse("app.refusal.one_only", { sentences: sentences.length });
  return sentences[0];
}

/** The lens and route of a sentence, as the server's pair picks them (router.js; "auto" by the router). */
async function picked(lens, text, model) {
  const read = oneSentence(text);
  return { ...(await routed(lens, read, model)), written: read };
}

/** A search of `text` by `by` with K beams and a forced prefix, and its payload. */
function traced(by, text, K, prefix) {
  const { bpe, config, model } = by;
  const ids = bpe.encode(text).slice(0, config.max_len - 1).concat(config.eos_id), S = ids.length;
  const maxNew = Math.max(1, Math.min(Math.max(2 * S + 10, prefix.length ? prefix.length + S + 10 : 0), config.max_len));
  if (prefix.length > maxNew) throw new Error(`prefix of ${prefix.length} tokens is longer than the ${maxNew} new tokens allowed (max_new_tokens, at most max_len=${config.max_len}): shorten it`);
  const found = tracedSearch(model, model.encode(ids), K, 1.0, maxNew, by.noRepeat, prefix);
  return tracePayload(by, ids, found, K, 1.0, prefix.length);
}

/** Whether the translation is unlike the checkpoint's (the alarm's confidence rule, as inpage.js applies it). */
function notice(by, probs) {
  const { reasons } = unsure(by, probs);
  return { unfamiliar: reasons.length > 0, reasons, alarms: [] };
}

const checkedBeams = (n) => {
  if (!(Number.isInteger(Number(n)) && n >= 1 && n <= 8)) throw new Error(`num_beams must be a whole number from 1 to 8, got ${n}`);
  return Number(n);
};

const said = (err) => err.answer || { error: String(err.message || err).slice(0, 300) };

/** The view's three questions, answered by the page's model: run(text, beams, model) is the view's value;
    force({text, num_beams, ids, word, model}) and hypothesis({text, ids, model}) its server functions. */
export function stepServer(lens) {
  const run = async (text, numBeams, model) => {
    try {
      const p = await picked(lens, text, model), K = checkedBeams(numBeams), greedy = traced(p.by, p.text, 1, []);
      const beam = K > 1 ? traced(p.by, p.text, K, []) : null;
      return { id: Date.now(), source: p.written, num_beams: K, layers: p.by.config.n_decoder_layers, heads: p.by.config.n_heads,
        greedy, beam, ...notice(p.by, (beam || greedy).probs), model: p.model, route: p.route };
    } catch (err) { return { id: Date.now(), ...said(err) }; }
  };
  const force = async ({ text, num_beams: numBeams, ids, word, model }) => {
    try {
      const p = await picked(lens, text, model), K = checkedBeams(numBeams);
      let prefix = checkedIds(p.by, ids, "prefix");
      if (word !== null && word !== undefined) prefix = withWord(p.by, prefix, word);
      if (!prefix.length) throw new Error("nothing to force: pick a candidate or type a word");
      const trace = traced(p.by, p.text, K, prefix);
      return { trace, maps: outputPayload(p.by, p.text, trace.ids, K), model: p.model };
    } catch (err) { return said(err); }
  };
  const hypothesis = async ({ text, ids, model }) => {
    try {
      const p = await picked(lens, text, model), out = checkedIds(p.by, ids, "hypothesis");
      if (!out.length) throw new Error("the start of the search has no words yet: pick a later hypothesis");
      return { ...outputPayload(p.by, p.text, out, 1), model: p.model };
    } catch (err) { return said(err); }
  };
  return { run, force, hypothesis };
}

/** A list of piece ids from the view: integers in the vocabulary, at most max_len (ui/step_through.checked_ids). */
function checkedIds(by, ids, name) {
  const c = by.config;
  if (!Array.isArray(ids) || !ids.every((i) => Number.isInteger(i))) throw new Error(`${name} must be a list of token ids (integers)`);
  if (ids.length > c.max_len || !ids.every((i) => i >= 0 && i < c.vocab_size)) throw new Error(`${name} must hold at most ${c.max_len} ids, each in [0, ${c.vocab_size})`);
  return ids;
}

/** The prefix, then a typed English word spelled as it would be after it (Translator.prefix_with_word). */
function withWord(by, ids, word) {
  if (typeof word !== "string" || !word.trim() || word.length > MAX_WORD_CHARACTERS) {
    throw new Error(`type one English word (at most ${MAX_WORD_CHARACTERS} characters) to force it`);
  }
  const refused = typedRefusal(word, "the typed word");
  if (refused) throw new Error(refused);
  const w = word.trim(), pieces = by.bpe.encode((ids.length && /^[\p{L}\p{N}]/u.test(w) ? " " : "") + w);
  if (pieces.includes(UNK_ID)) throw new Error(`the word '${w}' has characters the tokenizer cannot encode (they became <unk>)`);
  return ids.concat(pieces);
}
