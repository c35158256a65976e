// @ts-check
// twin of: lens/ablate.py, ui/head_lab_data.py (tests/test_site_views.py)
/* Attention Lens, the head lab answered in the page: what ui/head_lab_data.py's ablation_payload answers, computed
   by the page's model. The sentence is translated with every head on, then again with the heads of the lab's grids
   switched off (each one's output scaled by 0 before W_O, as model/heads.HeadMask does), and the second
   translation's maps are read with those heads off; headlab.js draws the answer as it draws the server's. */
import { changedWords } from "./steptext.js";
import { inPageSentence, outputPayload, routed, unsure, written } from "./inpage.js";
import { splitSentences } from "./sentences.js";

const MAX_CHARACTERS = 500; // ui/head_lab_data.py's: one sentence, with room
const KINDS = ["encoder", "decoder", "cross"];
// ui/head_lab.py's decoding options: 4 beams, no length penalty, at most 128 new pieces
const OPTIONS = { num_beams: 4, length_penalty: 1.0, max_new_tokens: 128 };

/** The sentence the lab works on and how many more the text had (head_lab_data.first_sentence). */
function firstSentence(text) {
  if (typeof text !== "string" || !text.trim()) throw new Error("text: please enter a German sentence");
  if (text.length > MAX_CHARACTERS) {
    throw new Error(`text has ${text.length.toLocaleString("en")} characters; the head lab takes one sentence of at most ${MAX_CHARACTERS} characters`);
  }
  const sentences = splitSentences(text);
  return sentences.length ? [sentences[0], sentences.length - 1] : [text.trim(), 0];
}

/** The grids' mask (headlab.js's maskJSON: {kind: [[0 or 1 a head] a layer]}), checked against the model. */
export function checkedMask(json, config) {
  let mask;
  try { mask = typeof json === "string" ? JSON.parse(json || "{}") : json; } catch { throw new Error("heads: not valid JSON; send a mask like {\"cross\": [[1, 0, 1, 1], ...], ...}"); }
  const layers = { encoder: config.n_encoder_layers, decoder: config.n_decoder_layers, cross: config.n_decoder_layers };
  const on = Object.fromEntries(KINDS.map((k) => [k, [...Array(layers[k])].map(() => new Array(config.n_heads).fill(1))]));
  if (Array.isArray(mask) && !mask.length) return on;
  for (const kind of KINDS) {
    const rows = mask && mask[kind];
    if (!Array.isArray(rows) || rows.length !== layers[kind] || !rows.every((r) => Array.isArray(r) && r.length === config.n_heads && r.every((v) => v === 0 || v === 1))) {
      throw new Error(`heads: ${kind} must be ${layers[kind]} rows of ${config.n_heads} zeros and ones`);
    }
  }
  return Object.fromEntries(KINDS.map((k) => [k, mask[k].map((r) => r.slice())]));
}

/** (kind, layer, head) of every head the mask switches off (lens/ablate.switched_off_heads). */
const switchedOff = (mask) => KINDS.flatMap((kind) => mask[kind].flatMap((heads, layer) => heads.flatMap((on, head) => on ? [] : [[kind, layer, head]])));

/** `fn()` run by `model` with the heads of `mask` switched off, then every head back on. */
function withHeads(model, mask, fn) {
  model.heads = mask;
  try { return fn(); } finally { model.heads = null; }
}


/** The lab's answer for `text` with the heads of `maskJSON` off, by the model `by` (one sentence, routed). */
export function ablation(by, text, maskJSON, left) {
  const mask = checkedMask(maskJSON, by.config), t0 = performance.now();
  const original = inPageSentence(by, text, OPTIONS), middle = performance.now();
  const ablated = withHeads(by.model, mask, () => inPageSentence(by, text, OPTIONS));
  const explanation = withHeads(by.model, mask, () => outputPayload(by, text, ablated.out, OPTIONS.num_beams));
  const ms = performance.now() - middle, before = written(by, original.out), after = written(by, ablated.out);
  const words = [before.split(/\s+/).filter(Boolean), after.split(/\s+/).filter(Boolean)], changed = changedWords(...words);
  explanation.status.method = "ablated";
  const { reasons } = unsure(by, original.probs);
  return {
    id: Date.now(), sentence: text, left_out: left, original: before, ablated: after,
    diff: { original_words: words[0], original_changed: changed.before, ablated_words: words[1], ablated_changed: changed.after },
    changed: original.out.join() !== ablated.out.join(), head_mask: mask, switched_off: switchedOff(mask),
    ms: { original: Math.round(middle - t0), ablated: Math.round(ms) }, explanation,
    unfamiliar: reasons.length > 0, reasons, alarms: [],
  };
}

/** The lab's handler in the page: the sentence routed as the server routes it, its answer or an error in words. */
export function headLabServer(lens) {
  return async (text, maskJSON) => {
    try {
      const [sentence, left] = firstSentence(text), p = await routed(lens, sentence);
      return { ...ablation(p.by, p.text, maskJSON, left), model: p.model, route: p.route };
    } catch (err) { return { id: Date.now(), error: String(err.message || err).slice(0, 300) }; }
  };
}
