// @ts-check
// twin of: lens/contrast.py (tests/test_site_views.py)
/* Attention Lens, "why X and not Y" answered in the page: /contrast's fields (lens/contrast.py) from forward passes
   of the page's model, with no gradients.

   At one step the model preferred the piece it wrote (X) to another (Y) by the logit difference z_X - z_Y. As on
   the server: the difference, the difference with a German of zeros (every token embedding set to 0, only the
   positions left), and the change in the difference when each attention head alone is switched off. What differs:
   the server shares the difference out among the German pieces by integrated gradients; the page has no backward
   pass for this model, so each piece's share here is occlusion, how much the difference drops when that one
   piece's embedding is set to zero (`method: "occlusion"`; why.js says so in one sentence). The shares then need
   not add up to the whole, and `completeness_gap` says by how much they miss. */
import { tapPass } from "./taps.js";

const KINDS = ["encoder", "decoder", "cross"];

/** The piece an English word or piece names (lens/contrast.alternative_id): the piece itself, else the first piece
    of " word"; with its label. */
export function alternativeId(bpe, alternative) {
  if (typeof alternative !== "string" || !alternative.trim()) throw new Error(`alternative must be an English word or piece, got '${alternative}'`);
  for (const candidate of [alternative, "\u0120" + alternative.trim()]) {
    const id = bpe.vocab.get(candidate);
    if (id !== undefined) return [id, bpe.labels([id])[0]];
  }
  const ids = bpe.encode(" " + alternative.trim());
  if (!ids.length) throw new Error(`alternative '${alternative}' has no pieces`);
  return [ids[0], bpe.labels(ids.slice(0, 1))[0]];
}

/** z_chosen - z_other at the last row of a teacher-forced pass over `prefix`, with `standIn` token embeddings. */
function difference(model, ids, prefix, chosen, other, standIn) {
  const logits = tapPass(model, ids, prefix, { standIn }).get("logits").data, V = model.V, at = (prefix.length - 1) * V;
  return logits[at + chosen] - logits[at + other];
}

/** /contrast for the output `e` ({ids, out, input}) of the page's model, at `step` (from 1), against `alternative`. */
export function contrast(lens, e, step, alternative) {
  const { model, bpe, config } = lens, T = e.out.length;
  if (!(Number.isInteger(Number(step)) && step >= 1 && step <= T)) {
    throw new Error(`step must be a whole number from 1 to ${T} (the pieces of the translation), got ${step}`);
  }
  const [other, otherPiece] = alternativeId(bpe, alternative), chosen = e.out[step - 1], prefix = e.input.slice(0, step);
  const S = e.ids.length, D = model.D, tokens = new Float32Array(S * D);
  e.ids.forEach((id, r) => tokens.set(model.embed.subarray(id * D, (id + 1) * D), r * D));
  const diff = (standIn) => difference(model, e.ids, prefix, chosen, other, standIn);
  const whole = diff(tokens), baseline = diff(new Float32Array(S * D));
  const attribution = e.ids.map((_, j) => { const without = tokens.slice(); without.fill(0, j * D, (j + 1) * D); return whole - diff(without); });
  const layers = { encoder: config.n_encoder_layers, decoder: config.n_decoder_layers, cross: config.n_decoder_layers };
  const heads = Object.fromEntries(KINDS.map((kind) => [kind, [...Array(layers[kind]).keys()].map((layer) =>
    [...Array(config.n_heads).keys()].map((head) => {
      const mask = Object.fromEntries(KINDS.map((k) => [k, [...Array(layers[k])].map((_, l) => [...Array(config.n_heads)].map((_, h) => (k === kind && l === layer && h === head ? 0 : 1)))]));
      model.heads = mask;
      try { return diff(tokens) - whole; } finally { model.heads = null; }
    }))]));
  return {
    step: Number(step), chosen: bpe.labels([chosen])[0], alternative: otherPiece, logit_diff: whole, baseline_logit_diff: baseline,
    source_tokens: bpe.labels(e.ids), source_attribution: attribution,
    completeness_gap: attribution.reduce((a, b) => a + b, 0) - (whole - baseline), heads, method: "occlusion",
  };
}
