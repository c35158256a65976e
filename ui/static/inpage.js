// @ts-check
// twin of: ui/payload.py, lens/explain.py (tests/test_site.py)
/* Attention Lens, the lens in the page: German text in, the payload the viewer draws out (ui/payload.py's
   page_payload, field for field), computed in the visitor's browser by the page's own tokenizer (bpe.js), model
   (transformer.js) and search (search.js); no server. The inside views that need only the model (how a row was
   computed, when each word was decided) are answered here too, through backend.callApi; the others say that they
   need the app's server.

     const lens = await loadInPage("./", kernels); // config, tokenizer, weights, decoding rule, domain
     const payload = await inPageTranslate(lens, "Ein Hund rennt.", { num_beams: 1 });  */
import { BPE } from "./bpe.js";
import { domainGuess } from "./domain.js";
import { fixed, number, t } from "./i18n.js";
import { isHan, t2sTable } from "./chinese.js";
import { languageCheck, makeRouter, readGzipJson, truecaser, umlauts } from "./router.js";
import { beam, greedy, maxNewTokens, replay } from "./search.js";
import { pyStrip, splitSentences } from "./sentences.js";
import { Transformer, loadKernels, readSafetensors } from "./transformer.js";

// the server's limits (lens/explain.py, ui/runtime.py, ui/translate.py); its words are the catalogue's (inpage.*)
const MAX_CHARACTERS = 5000, MAX_SENTENCES = 16;
const SPECIAL = new Set(["<s>", "</s>", "<pad>", "<unk>"]);
const strip = (s) => pyStrip(s); // sentences.js: the server strips with Python's whitespace

/** The checkpoint's files under `base` (a folder URL ending in '/'): what the page needs to translate; `kernels`
    (loadKernels) the SIMD product, or none for plain JS. */
export async function loadInPage(base, kernels) {
  const get = async (name, how) => {
    const r = await fetch(base + name);
    if (!r.ok) throw new Error(t("inpage.load_failed", { name, status: r.status }));
    return how === "bytes" ? r.arrayBuffer() : r.json();
  };
  const [config, tokenizer, weights, site] = await Promise.all([get("config.json"), get("tokenizer.json"),
    get("weights.safetensors", "bytes"), get("site.json")]);
  const content = site.domain && readGzipJson ? await readGzipJson(await get(site.domain, "bytes")) : null;
  const domain = content && content.format === 1 && content.counts ? domainGuess(content) : null;
  const language = site.language && readGzipJson ? await readGzipJson(await get(site.language, "bytes")) : null;
  /** @type {InPageLens} */
  const lens = { config, bpe: new BPE(tokenizer), model: new Transformer(config, readSafetensors(weights), kernels),
    noRepeat: site.no_repeat_ngram || 0, rule: site.alarm_rule || { confidence_below: -0.56 }, site, domain, router: null,
    everyday: null, chinese: null, base };
  const t2s = site.chinese && site.t2s ? t2sTable(await get(site.t2s)) : null; // Traditional -> Simplified
  if (domain || language) {
    lens.router = makeRouter({ domain, language: language && language.counts ? languageCheck(language) : null,
      truecaser: content && content.counts ? truecaser(content.counts) : null, everyday: !!site.everyday, chinese: t2s,
      restorer: content && content.counts ? umlauts(content.counts) : null });
  }
  if (site.chinese) { // the Chinese model's files, fetched when a Chinese sentence first goes to it
    let loading = null;
    lens.chinese = () => (loading = loading || (async () => loadInPage(base + site.chinese,
      kernels && kernels.fresh ? await kernels.fresh() : null))());
  }
  if (site.everyday) { // the everyday model's files, fetched when a sentence first goes to it
    let loading = null;
    lens.everyday = () => (loading = loading || (async () => loadInPage(base + site.everyday,
      kernels && kernels.fresh ? await kernels.fresh() : null))());
  }
  return lens;
}

/** ui/runtime.REFUSED_RANGES: what a typed field refuses (control characters but tab and newline, invisible
    format characters, line and paragraph separators, noncharacters), written out as Python writes them. */
const REFUSED_RANGES = [[0x00, 0x08], [0x0b, 0x0c], [0x0e, 0x1f], [0x7f, 0x9f], [0xad, 0xad], [0x600, 0x605], [0x61c, 0x61c],
  [0x6dd, 0x6dd], [0x70f, 0x70f], [0x890, 0x891], [0x8e2, 0x8e2], [0x180e, 0x180e], [0x200b, 0x200f], [0x2028, 0x202e],
  [0x2060, 0x2064], [0x2066, 0x206f], [0xfdd0, 0xfdef], [0xfeff, 0xfeff], [0xfff9, 0xfffb], [0x110bd, 0x110bd],
  [0x110cd, 0x110cd], [0x13430, 0x1343f], [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0001, 0xe0001], [0xe0020, 0xe007f]];
const unsafe = (c) => { const code = /** @type {number} */ (c.codePointAt(0));
  return (code & 0xfffe) === 0xfffe || REFUSED_RANGES.some(([low, high]) => code >= low && code <= high); };

/** ui/runtime.checked_typed's refusal of a typed field `name` (a forced word, a prefix, time travel's sentence), in
    the server's words: null when it may be used. */
export function typedRefusal(value, name) {
  const chars = [...value], at = chars.findIndex(unsafe);
  if (at < 0) return null;
  const code = chars[at].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
  return `${name} has a control or text-direction character at position ${at + 1} (U+${code}), which would be echoed into the translation: remove it`;
}

/** The server's refusals, in its words: null when the text may be translated. */
function refusal(text) {
  const chars = [...text];
  const lone = chars.findIndex((c) => /^[\ud800-\udfff]$/.test(c));
  if (lone >= 0) {
    return t("inpage.lone_surrogate", { position: lone + 1, escape: `\\u${chars[lone].charCodeAt(0).toString(16)}` });
  }
  if (chars.length > MAX_CHARACTERS) {
    return t("inpage.too_long", { characters: number(chars.length), limit: number(MAX_CHARACTERS) });
  }
  const n = splitSentences(text).length;
  if (n > MAX_SENTENCES) return t("inpage.too_many", { sentences: n, limit: MAX_SENTENCES });
  return null;
}

/** Token positions grouped into words, as lens/explain.word_spans. */
export function wordSpans(tokens) {
  const spans = [];
  let breaks = true;
  tokens.forEach((token, i) => {
    const text = strip(token.replace(/\u2581/g, "")), special = SPECIAL.has(token);
    const partial = token.includes("\ufffd") && spans.length > 0 && tokens[spans[spans.length - 1].slice(-1)[0]].includes("\ufffd");
    const punct = !special && text !== "" && ![...text].some((c) => /[\p{L}\p{N}]/u.test(c)) && !text.includes("\ufffd");
    const han = isHan(text); // Chinese has no spaces: each character is a word of its own
    if (!partial && (breaks || special || punct || han || token.startsWith("\u2581"))) spans.push([i]); else spans[spans.length - 1].push(i);
    breaks = special || punct || han;
  });
  return spans;
}

/** The words of a piece sequence, each written as the tokenizer decodes its pieces (lens/explain.words_of). */
export function wordsOf(bpe, ids, tokens) {
  return wordSpans(tokens).map((span) => span.length === 1 && SPECIAL.has(tokens[span[0]]) ? [tokens[span[0]], span]
    : [strip(bpe.decode(span.map((i) => ids[i]))) || tokens[span[0]], span]);
}

/** Weights in [0, 1] -> base64 of one byte each, rounded half to even as numpy's rint. */
export function quantize(values) {
  const bytes = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = Math.min(1, Math.max(0, values[i] || 0)) * 255, r = Math.round(x);
    bytes[i] = Math.abs(x - Math.trunc(x)) === 0.5 ? 2 * Math.round(x / 2) : r;
  }
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return btoa(s);
}

/** (L, H, rows, cols) from per-row pieces: rows[r][layer] is (H, n_r) with n_r <= cols (the rest 0). */
function stackRows(rowsByStep, L, H, cols) {
  const T = rowsByStep.length, out = new Float32Array(L * H * T * cols);
  rowsByStep.forEach((layers, r) => layers.forEach((w, l) => {
    const n = w.length / H;
    for (let h = 0; h < H; h++) for (let c = 0; c < n; c++) out[((l * H + h) * T + r) * cols + c] = w[h * n + c];
  }));
  return out;
}

/** The English of piece ids `out` as the tokenizer writes it, the special pieces left out (Translator.decode). */
export function written(lens, out) {
  const c = lens.config, special = new Set([c.pad_id, c.bos_id, c.eos_id]);
  return strip(lens.bpe.decode(out.filter((i) => !special.has(i))));
}

/** The alarm's confidence rule on a translation's piece probabilities: their mean log-probability, and the reason
    in words where it is under the checkpoint's threshold (training_data/alarm.py's confidence_below). */
export function unsure(lens, probs) {
  const meanLogProb = probs.length ? probs.reduce((a, p) => a + Math.log(Math.min(1, Math.max(1e-12, p))), 0) / probs.length : 0;
  const threshold = lens.rule.confidence_below;
  const reasons = meanLogProb < threshold ? [t("inpage.unsure", { mean: fixed(meanLogProb, 2), threshold: fixed(threshold, 2) })] : [];
  return { meanLogProb, reasons };
}

/** The lens of the model a route names: the everyday or the Chinese one (fetched on first use), else this one. */
async function modelOf(lens, r) {
  if (r && r.model === "everyday" && lens.everyday) return lens.everyday();
  if (r && r.model === "zh-en" && lens.chinese) return lens.chinese();
  return lens;
}

/** The model a sentence goes to, as the server's pair picks it (router.js; `model` "auto", "default" or "everyday"):
    its lens, the sentence as that model reads it, the route's fields but its text (null without a router). */
export async function routed(lens, sentence, model = "auto", writtenAs = sentence) {
  const r = lens.router ? lens.router.route(sentence, model || "auto", writtenAs) : null;
  const by = await modelOf(lens, r);
  return { by, text: r ? r.text : sentence, route: r ? (({ text: _, ...rest }) => rest)(r) : null, model: r ? r.model : "default" };
}

/** One sentence through the model: its ids, search and maps; with `o.out`, the maps of that output instead of a
    search's (a teacher-forced pass, as lens/maps.teacher_forced). */
export { explainOne as inPageSentence };
function explainOne(lens, source, o) {
  const { config, bpe, model } = lens;
  let ids = bpe.encode(source);
  const truncated = ids.length > config.max_len - 1;
  ids = ids.slice(0, config.max_len - 1).concat(config.eos_id);
  const enc = model.encode(ids), maxNew = maxNewTokens(config, ids.length, o.max_new_tokens);
  const found = o.out ? { out: o.out, steps: null } : o.num_beams > 1
    ? beam(model, enc, o.num_beams, o.length_penalty, maxNew, lens.noRepeat) : greedy(model, enc, maxNew, lens.noRepeat);
  const out = found.out, steps = found.steps || replay(model, enc, out), S = ids.length, T = out.length;
  const H = config.n_heads, input = [config.bos_id].concat(out.slice(0, -1));
  const encoder = new Float32Array(config.n_encoder_layers * H * S * S);
  enc.maps.forEach((w, l) => encoder.set(w, l * H * S * S)); // each layer's (H, S, S), in order
  const maps = { encoder, decoder: stackRows(steps.map((s) => s.self), config.n_decoder_layers, H, T),
    cross: stackRows(steps.map((s) => s.cross), config.n_decoder_layers, H, S) };
  return { ids, out, input, truncated, maps, probs: steps.map((s) => s.prob) };
}

/** The sentence's payload, as lens/payload.sentence_payload writes it (no training-data evidence here; which kind
    of German it reads like where the checkpoint has the guess: domain.js). */
function sentencePayload(lens, source, e, route) {
  const { bpe, rule } = lens, tokens = { src: bpe.labels(e.ids), tgt: bpe.labels(e.out), in: bpe.labels(e.input) };
  const { meanLogProb, reasons } = unsure(lens, e.probs);
  return {
    source, translation: written(lens, e.out), truncated: e.truncated, tokens,
    words: { src: wordsOf(bpe, e.ids, tokens.src), tgt: wordsOf(bpe, e.out, tokens.tgt), in: wordsOf(bpe, e.input, tokens.in) },
    probs: e.probs.map((p) => Math.round(p * 1000) / 1000), mean_log_prob: Math.round(meanLogProb * 1000) / 1000,
    unfamiliar: reasons.length > 0, reasons, evidence: [],
    ...(route ? { route, threshold: rule.confidence_below } : lens.domain ? { domain: lens.domain.report(source) } : {}),
    maps: { encoder: quantize(e.maps.encoder), decoder: quantize(e.maps.decoder), cross: quantize(e.maps.cross) },
  };
}

/** German text -> the page's payload (or {message} / {error} as the server answers), computed here. The float
    maps of the last call stay on `lens.lastMaps` (tests compare them with the server's). */
export async function inPageTranslate(lens, text, options) {
  const id = Date.now() * 1e6 + Math.floor(Math.random() * 1e6);
  if (typeof text !== "string" || !strip(text)) return { id, message: t("inpage.empty") };
  const refused = refusal(text);
  if (refused) return { id, error: refused.slice(0, 300) };
  const o = Object.assign({ num_beams: 4, length_penalty: 1.0, max_new_tokens: 128 }, options || {});
  const t0 = performance.now();
  const pairs = lens.router ? lens.router.split(text) : splitSentences(text).map((s) => [s, s]);
  const shown = pairs.slice(0, MAX_SENTENCES), payloads = [];
  lens.lastMaps = [];
  for (const [written, read] of shown) { // each sentence by the model its route names (router.js)
    let r = lens.router ? lens.router.route(read, o.model || "auto", written) : null;
    // the compare view's second side: each sentence by the model its route did not pick (ui/translate.other_side)
    if (r && o.other && lens.everyday && r.model !== "zh-en") r = lens.router.route(read, r.model === "everyday" ? "default" : "everyday", written);
    const by = await modelOf(lens, r);
    const e = explainOne(by, r ? r.text : read, o);
    lens.lastMaps.push(e.maps);
    let route = null;
    if (r) { const { text: _, ...rest } = r; route = rest; }
    payloads.push(sentencePayload(by, r ? r.text : read, e, route));
  }
  return pagePayload(lens, id, o, payloads, pairs.length, t0);
}

/** The maps of one given output `out` (piece ids, ending in EOS where it ended) of `source` by this lens's model,
    in the page's payload (ui/step_through.maps_payload): what a beam hypothesis or a forced translation looks like
    inside. */
export function outputPayload(lens, source, out, numBeams) {
  const t0 = performance.now(), o = { num_beams: numBeams, length_penalty: 1.0, max_new_tokens: lens.config.max_len, out };
  const id = Date.now() * 1e6 + Math.floor(Math.random() * 1e6);
  return pagePayload(lens, id, o, [sentencePayload(lens, source, explainOne(lens, source, o), null)], 1, t0);
}

/** The page's payload (lens/payload.page_payload) of sentence payloads made with options `o`. */
function pagePayload(lens, id, o, payloads, sentences, t0) {
  const c = lens.config;
  return {
    v: 1, id, layers: { encoder: c.n_encoder_layers, decoder: c.n_decoder_layers, cross: c.n_decoder_layers },
    heads: c.n_heads, d_model: c.d_model, max_len: c.max_len, threshold: lens.rule.confidence_below,
    options: { num_beams: o.num_beams, length_penalty: o.length_penalty, max_new_tokens: o.max_new_tokens },
    left_out: Math.max(0, sentences - MAX_SENTENCES),
    // the search as lens.explain.method_name names it (the page writes it from options.num_beams)
    status: { method: o.num_beams === 1 ? "greedy" : `beam search (${o.num_beams} beams)`,
      ms: Math.round(performance.now() - t0), device: t("inpage.this_browser") },
    sentences: payloads, translation: payloads.map((p) => p.translation).filter((t) => t).join(" "),
  };
}
