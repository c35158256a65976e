// @ts-check
// twin of: lens/qkv.py, lens/logit_lens.py, lens/code.py, lens/tap_values.py (tests/test_site.py)
/* Attention Lens, the inside views answered in the page, computed by the page's model (transformer.js) over the
   page's own translation, in the server's fields, so that the views draw them as they draw the server's: /qkv
   (lens/qkv.py), /logit_lens (lens/logit_lens.py), /contributions (lens/contributions.py; alti.js), /contrast
   (lens/contrast.py; whynot.js, by forward passes), /patch (lens/patching.py; patch.js), /code (lens/code.py) and
   /taps (lens/tap_values.py). answerInPage(lens) puts them behind backend.callApi. */
import { useInPage } from "./backend.js";
import { t } from "./i18n.js";
import { inPageSentence, typedRefusal } from "./inpage.js";
import { contributions } from "./alti.js";
import { maxNewTokens, replay, topk } from "./search.js";
import { tracedSearch } from "./steptrace.js";
import { contrast } from "./whynot.js";
import { patch } from "./patch.js";
import { peek, tapPass } from "./taps.js";
import { softmaxInPlace } from "./transformer.js";

/** The page's translation of one sentence with the API's decoding arguments; with an English `prefix`, the one that
    starts with it (the search forced through its pieces, as lens/explain.decode_one's prefix). */
function translated(lens, text, decoding, beams, lengthPenalty, maxLength, prefix) {
  if (typeof text !== "string" || !text.trim()) throw new Error(t("inside.no_sentence"));
  const o = { num_beams: decoding === "greedy" ? 1 : Number(beams) || 4, length_penalty: Number(lengthPenalty ?? 1),
    max_new_tokens: Number(maxLength) || 128 };
  if (typeof prefix !== "string" || !prefix.trim() || ["auto", "default", "everyday", "zh-en"].includes(prefix)) return inPageSentence(lens, text, o);
  const refused = typedRefusal(prefix, "prefix");
  if (refused) throw new Error(refused);
  const { bpe, config, model } = lens, forced = bpe.encode(prefix.trim());
  const ids = bpe.encode(text).slice(0, config.max_len - 1).concat(config.eos_id);
  const out = tracedSearch(model, model.encode(ids), o.num_beams, o.length_penalty, maxNewTokens(config, ids.length, o.max_new_tokens),
    lens.noRepeat, forced).out;
  return { ids, out, input: [config.bos_id].concat(out.slice(0, -1)) };
}

/** One head's part of a (rows, D) array: row r's dk numbers. */
const part = (a, r, h, D, dk) => Array.from(a.subarray(r * D + h * dk, r * D + (h + 1) * dk));

/** /qkv: row `row` of head `head` of the `kind` map of `layer` (all from 1), opened up. */
function qkv(lens, [text, kind, layer, head, row, decoding, beams, lp, maxLength]) {
  const { model, bpe, config } = lens, D = config.d_model, dk = D / config.n_heads, e = translated(lens, text, decoding, beams, lp, maxLength);
  const layers = kind === "encoder" ? config.n_encoder_layers : config.n_decoder_layers;
  if (!["encoder", "decoder", "cross"].includes(kind)) throw new Error(`kind must be one of encoder, decoder, cross, got '${kind}'`);
  if (!(layer >= 1 && layer <= layers)) throw new Error(`layer must be between 1 and ${layers} (counted from 1), got ${layer}`);
  if (!(head >= 1 && head <= config.n_heads)) throw new Error(`head must be between 1 and ${config.n_heads} (counted from 1), got ${head}`);
  const rows = kind === "encoder" ? e.ids.length : e.input.length, j = row - 1, h = head - 1;
  if (!(row >= 1 && row <= rows)) throw new Error(`row must be between 1 and ${rows} (counted from 1), got ${row}`);
  const name = `${kind === "encoder" ? "encoder" : "decoder"}.${layer - 1}.${kind === "cross" ? "cross" : "self"}_attn`;
  let seen = /** @type {any} */ (null);
  const enc = model.encode(e.ids, kind === "encoder" ? (n, v) => { if (n === name) seen = { ...v, r: j }; } : undefined);
  if (kind !== "encoder") replay(model, enc, e.out, (n, v, t) => { if (n === name && t === j) seen = { ...v, r: 0 }; });
  const M = kind === "encoder" ? e.ids.length : kind === "cross" ? enc.S : e.input.length;
  const q = part(seen.q, seen.r, h, D, dk), k = [], v = [];
  for (let c = 0; c < M; c++) { k.push(part(seen.k, c, h, D, dk)); v.push(part(seen.v, c, h, D, dk)); }
  const mask = [...Array(M).keys()].map((c) => kind !== "decoder" || c <= j);
  const scores = k.map((kc) => kc.reduce((s, x, i) => s + x * q[i], 0)), scaled = scores.map((s) => s / Math.sqrt(dk));
  const weights = softmaxInPlace(Float32Array.from(scaled.map((s, c) => (mask[c] ? s : -Infinity))), M);
  const headOutput = [...Array(dk).keys()].map((i) => v.reduce((s, vc, c) => s + weights[c] * vc[i], 0));
  const src = bpe.labels(e.ids), input = bpe.labels(e.input);
  return { kind, layer, head, row, row_token: (kind === "encoder" ? src : input)[j],
    writes: kind === "encoder" ? null : bpe.labels([e.out[j]])[0], column_tokens: kind === "decoder" ? input : src,
    q, k, v, scores, scaled, mask, weights: Array.from(weights), head_output: headOutput,
    output: Array.from(seen.out.subarray(seen.r * D, (seen.r + 1) * D)) };
}

/** /logit_lens: the decoder's state after every sublayer read out as if it were the last. */
function logitLens(lens, [text, decoding, beams, lp, maxLength, prefix]) {
  const { model, bpe, config } = lens, e = translated(lens, text, decoding, beams, lp, maxLength, prefix);
  // [the stage's name as lens/stream.py names it (the page writes it: core.stageName), its tap]
  const names = [["embedding", "decoder.embed"]];
  for (let i = 0; i < config.n_decoder_layers; i++) {
    names.push([`layer ${i + 1} self-attention`, `decoder.${i}.self_attn.resid`],
      [`layer ${i + 1} cross-attention`, `decoder.${i}.cross_attn.resid`], [`layer ${i + 1} feed-forward`, `decoder.${i}.ff.resid`]);
  }
  const index = new Map(names.map(([, n], s) => [n, s])), T = e.out.length;
  const prob = names.map(() => new Array(T)), top = names.map(() => new Array(T)), best = names.map(() => new Array(T));
  replay(model, model.encode(e.ids), e.out, (name, state, t) => {
    const s = index.get(name);
    if (s === undefined) return;
    const p = softmaxInPlace(model.logits(state), config.vocab_size), five = topk(p, 5);
    prob[s][t] = p[e.out[t]]; best[s][t] = five[0][1];
    const labels = bpe.labels(five.map(([, id]) => id));
    top[s][t] = five.map(([v], i) => ({ token: labels[i], prob: Math.round(v * 1e4) / 1e4 }));
  });
  const decided = e.out.map((w, t) => {
    for (let s = 0; s < names.length; s++) if (best.slice(s).every((row) => row[t] === w)) return s;
    return names.length - 1;
  });
  return { stages: names.map(([label]) => label), target_tokens: bpe.labels(e.out), prob, top, decided_at: decided };
}

/** The taps of the last teacher-forced pass, kept: the Code view and each step of the picture ask of the same
    sentence in turn, and one pass answers them all. */
let lastPass = /** @type {{model: any, key: string, taps: Map<string, any>} | null} */ (null);

/** Every tap of the pass over `ids` and `input` by `model` (taps.js), computed once per sentence. */
function passOf(model, ids, input) {
  const key = `${ids.join(",")}|${input.join(",")}`;
  if (!lastPass || lastPass.model !== model || lastPass.key !== key) lastPass = { model, key, taps: tapPass(model, ids, input) };
  return lastPass.taps;
}

/** /contributions: who wrote each English piece, ALTI+ (alti.js) read off the page's teacher-forced pass. */
function whoWrote(lens, [text, decoding, beams, lp, maxLength, prefix]) {
  const e = translated(lens, text, decoding, beams, lp, maxLength, prefix);
  return contributions(lens.model, lens.bpe, passOf(lens.model, e.ids, e.input), e.ids, e.input, e.out);
}

/** /contrast: why the piece at `step` and not `alternative` (whynot.js: forward passes, occlusion for the German). */
function whyNot(lens, [text, step, alternative, decoding, beams, lp, maxLength]) {
  return contrast(lens, translated(lens, text, decoding, beams, lp, maxLength), step, alternative);
}

/** /patch: the corrupted sentence's run patched from the clean one's, level by level and head by head (patch.js). */
function patching(lens, [text, corrupted, step, decoding, beams, lp, maxLength]) {
  if (typeof corrupted !== "string" || !corrupted.trim()) throw new Error(t("inside.no_corrupted"));
  const read = lens.router ? lens.router.prepared(corrupted.trim())[0] : corrupted.trim();
  return patch(lens, text, read, step, (sentence) => translated(lens, sentence, decoding, beams, lp, maxLength));
}

/** The Code view's files and tap lines (code.json beside the default model's files), fetched once. */
function codeMap(lens) {
  lens.code = lens.code || fetch(lens.base + (lens.site.code || "code.json")).then((r) => {
    if (!r.ok) throw new Error(t("inside.code_failed", { name: lens.site.code || "code.json", status: r.status }));
    return r.json();
  });
  return lens.code;
}

/** /code: each tapped line of the shown files with its tensor for one sentence, the layers' taps at `layer` (from
    1), read off the page's own teacher-forced pass (taps.js). `top` is the page's first lens, which ships code.json. */
async function code(lens, [text, layer, decoding, beams, lp, maxLength], top) {
  const { config } = lens, most = Math.min(config.n_encoder_layers, config.n_decoder_layers);
  if (!(Number.isInteger(Number(layer)) && layer >= 1 && layer <= most)) {
    throw new Error(`layer must be a whole number from 1 to ${most}, got ${layer}`);
  }
  const map = await codeMap(top), e = translated(lens, text, decoding, beams, lp, maxLength);
  const taps = passOf(lens.model, e.ids, e.input), found = [];
  for (const [key, where] of Object.entries(map.lines)) {
    const name = key.replace("{i}", String(layer - 1)), value = taps.get(name);
    if (value && map.files[where.file] !== undefined) found.push({ tap: key, name, ...where, ...peek(value) });
  }
  return { layer: Number(layer), layers: most, source_ids: e.ids, input_ids: e.input, files: map.files, taps: found };
}

const TOP = 50; // lens/tap_values.py: the likeliest pieces of each output row
// lens/tap_values.py's TEMPERATURES: the slider's, at which each row's log_z (the full softmax's denominator) is sent.
const TEMPERATURES = Array.from({ length: 19 }, (_, i) => Math.round(2 + i) / 10);

/** log Σ_v exp(z_v / τ) of one row of logits, over the whole vocabulary (lens/tap_values.log_z). */
function logSumExp(row, tau) {
  let top = -Infinity, sum = 0;
  for (const z of row) if (z / tau > top) top = z / tau;
  for (const z of row) sum += Math.exp(z / tau - top);
  return top + Math.log(sum);
}

/** /taps: the tensors of named taps (at most 12) of the page's teacher-forced pass, "logits" as the TOP likeliest
    pieces of each row, in lens/tap_values.py's fields. */
function tapsAnswer(lens, [text, names, decoding, beams, lp, maxLength]) {
  const asked = typeof names === "string" ? (names.trim().startsWith("[") ? JSON.parse(names)
    : names.split(",").map((n) => n.trim()).filter(Boolean)) : names;
  if (!Array.isArray(asked) || !asked.length) throw new Error("names must be a list of tap names, like ['encoder.0.self_attn.q']");
  if (asked.length > 12) throw new Error(`at most 12 tap names at once, got ${asked.length}`);
  const e = translated(lens, text, decoding, beams, lp, maxLength), all = passOf(lens.model, e.ids, e.input);
  const taps = /** @type {Record<string, any>} */ ({});
  for (const name of asked) {
    const value = all.get(name);
    if (!value) throw new Error(`'${name}' is not a tap of this model (model/taps.py lists them)`);
    taps[name] = name === "logits" ? topRows(value, lens.bpe) : value;
  }
  const c = lens.config, sizes = { d_model: c.d_model, n_heads: c.n_heads, d_ff: c.d_ff, vocab_size: c.vocab_size };
  return { source_ids: e.ids, input_ids: e.input, sizes, taps };
}

/** The output layer's (1, T, V) as the TOP likeliest pieces of each row: their ids, pieces and logits, and each
    row's log_z at the slider's temperatures. */
function topRows({ shape, data }, bpe) {
  const [, T, V] = shape, ids = [], values = [], logZ = /** @type {Record<string, number[]>} */ ({});
  for (const tau of TEMPERATURES) logZ[tau.toFixed(1)] = [];
  for (let r = 0; r < T; r++) {
    const row = data.subarray(r * V, (r + 1) * V), best = topk(row, TOP);
    ids.push(best.map(([, id]) => id)); values.push(best.map(([v]) => v));
    for (const tau of TEMPERATURES) logZ[tau.toFixed(1)].push(logSumExp(row, tau));
  }
  return { shape, top_ids: ids, top_tokens: ids.map((row) => bpe.labels(row)), top_values: values, log_z: logZ };
}

/** The model a call asks about, as the server picks it: the `model` its last value names ("default",
    "everyday", "zh-en"), else the router's choice for its sentence (router.js); the default model where the page has one. */
async function lensFor(lens, data) {
  const last = data[data.length - 1];
  const named = typeof last === "string" && ["auto", "default", "everyday", "zh-en"].includes(last) ? last : "auto";
  const model = named !== "auto" || !lens.router ? named : lens.router.route(String(data[0])).model;
  if (model === "zh-en" && lens.chinese) return lens.chinese();
  return model === "everyday" && lens.everyday ? lens.everyday() : lens;
}

/** The views' questions (backend.callApi) answered in the page, for the views the model alone answers. */
export function answerInPage(lens) {
  const local = { qkv, logit_lens: logitLens, contributions: whoWrote, contrast: whyNot, patch: patching, code, taps: tapsAnswer };
  useInPage(async (name, data) => {
    if (!local[name]) throw new Error(t("inside.needs_server"));
    await new Promise((r) => setTimeout(r, 0)); // the panel's "Computing…" is drawn first
    return local[name](await lensFor(lens, data), data, lens);
  });
}
