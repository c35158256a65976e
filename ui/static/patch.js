// @ts-check
// twin of: lens/patching.py, lens/patching_heads.py (tests/test_site_views.py)
/* Attention Lens, activation patching answered in the page: /patch's fields (lens/patching.py and
   lens/patching_heads.py) from replays of the page's model (taps.js's pass, its taps replaced).

   Two German sentences of as many pieces, a clean one and a corrupted one. At one step of the clean translation,
   with the clean English before it, the model prefers the clean word y; with the corrupted German, another, y'.
   d = logit(y) - logit(y') measures that choice. The corrupted run is repeated with one vector of the encoder's
   stream (a level, a position) taken from the clean run, and with one attention head's output (before W_O) taken
   from it: recovered = (d_patched - d_corrupted) / (d_clean - d_corrupted), 1 restoring the clean choice. */
import { written } from "./inpage.js";
import { tapPass } from "./taps.js";

const KINDS = ["encoder", "decoder", "cross"];
const prefixOf = { encoder: (i) => `encoder.${i}.self_attn`, decoder: (i) => `decoder.${i}.self_attn`, cross: (i) => `decoder.${i}.cross_attn` };

/** The encoder's stream between its layers (lens/stream.encoder_levels): the embedding, then each layer's output. */
const levels = (n) => ["encoder.embed", ...[...Array(n).keys()].map((i) => `encoder.${i}.ff.resid`)];

/** The logits after `prefix` (the last row) of a pass over `ids`, with `replace` (taps.js) patching it. */
function lastLogits(model, ids, prefix, replace) {
  const logits = tapPass(model, ids, prefix, { replace }).get("logits").data;
  return logits.subarray((prefix.length - 1) * model.V, prefix.length * model.V);
}

/** The clean and corrupted sentences' pieces, refused in the server's words where they cannot be patched. */
function checkedPair(bpe, config, clean, corrupted) {
  const ids = (text) => bpe.encode(text).slice(0, config.max_len - 1).concat(config.eos_id);
  const a = ids(clean), b = ids(corrupted);
  if (a.length !== b.length) {
    throw new Error(`the corrupted sentence has ${b.length} pieces and the clean one ${a.length}: patching swaps vectors position by position, so swap a word for one of as many pieces`);
  }
  if (a.join() === b.join()) throw new Error("the corrupted sentence is the clean one: change a word");
  return [a, b];
}

/** /patch in the page: `decoded(text)` is the page's translation of a sentence ({out}: its pieces). */
export function patch(lens, clean, corrupted, step, decoded) {
  const { model, bpe, config } = lens, [cleanIds, badIds] = checkedPair(bpe, config, clean, corrupted);
  if (!(Number.isInteger(Number(step)) && step >= 0 && step <= config.max_len)) {
    throw new Error(`step must be a whole number from 0 to ${config.max_len} (a piece of the translation, or 0 for the first that differs), got ${step}`);
  }
  const out = decoded(clean).out, badOut = decoded(corrupted).out;
  let at = Number(step);
  if (!at) {
    at = out.findIndex((p, i) => i < badOut.length && p !== badOut[i]) + 1;
    if (!at) throw new Error("the two sentences translate alike: swap a word that changes the translation");
  } else if (at > out.length) throw new Error(`step must be a whole number from 1 to ${out.length} (the pieces of the translation), or 0 for the first that differs, got ${step}`);
  const prefix = [config.bos_id, ...out.slice(0, at - 1)], y = out[at - 1];
  const badLogits = lastLogits(model, badIds, prefix, null);
  let yOther = 0;
  for (let i = 1; i < badLogits.length; i++) if (badLogits[i] > badLogits[yOther]) yOther = i;
  if (yOther === y) throw new Error(`the corrupted German still gives '${bpe.decode([y]).trim()}' at step ${at}: pick a step (or a word) where the two differ`);
  const cleanTaps = tapPass(model, cleanIds, prefix), cleanLogits = cleanTaps.get("logits").data.subarray((prefix.length - 1) * model.V);
  const dClean = cleanLogits[y] - cleanLogits[yOther], dBad = badLogits[y] - badLogits[yOther];
  const share = (replace) => { const l = lastLogits(model, badIds, prefix, replace); return Math.round(((l[y] - l[yOther]) - dBad) / (dClean - dBad) * 1e4) / 1e4; };
  const D = model.D, names = levels(config.n_encoder_layers);
  const recovered = names.map((name) => cleanIds.map((_, j) => share((tap, data) => {
    if (tap !== name) return undefined;
    const x = data.slice(); // the corrupted run's stream, one position from the clean run's
    x.set(cleanTaps.get(name).data.subarray(j * D, (j + 1) * D), j * D);
    return x;
  })));
  const layers = { encoder: config.n_encoder_layers, decoder: config.n_decoder_layers, cross: config.n_decoder_layers };
  const headsFrom = (pick) => (tap, data) => { // the heads `pick(kind, layer, head)` chooses, from the clean run
    const kind = KINDS.find((k) => [...Array(layers[k]).keys()].some((i) => tap === `${prefixOf[k](i)}.heads`));
    if (!kind) return undefined;
    const layer = [...Array(layers[kind]).keys()].find((i) => tap === `${prefixOf[kind](i)}.heads`), x = data.slice();
    const from = cleanTaps.get(tap).data, size = data.length / config.n_heads;
    for (let h = 0; h < config.n_heads; h++) if (pick(kind, layer, h)) x.set(from.subarray(h * size, (h + 1) * size), h * size);
    return x;
  };
  const restored = Object.fromEntries(KINDS.map((kind) => [kind, [...Array(layers[kind]).keys()].map((layer) =>
    [...Array(config.n_heads).keys()].map((head) => share(headsFrom((k, l, h) => k === kind && l === layer && h === head))))]));
  const ranked = KINDS.flatMap((kind) => restored[kind].flatMap((row, layer) => row.map((value, head) => ({ kind, layer: layer + 1, head: head + 1, restored: value }))));
  ranked.sort((a, b) => b.restored - a.restored || (a.kind < b.kind ? 1 : a.kind > b.kind ? -1 : b.layer - a.layer || b.head - a.head));
  const [cleanPiece, badPiece] = bpe.labels([y, yOther]), text = (ids) => written(lens, ids);
  return {
    step: at, clean_piece: cleanPiece, corrupted_piece: badPiece, clean_diff: dClean, corrupted_diff: dBad,
    levels: ["embedding", ...[...Array(config.n_encoder_layers).keys()].map((i) => `layer ${i + 1}`)],
    source_tokens: bpe.labels(cleanIds), corrupted_tokens: bpe.labels(badIds), recovered, restored,
    all: share(headsFrom(() => true)), none: share(null), top_heads: ranked.slice(0, 3),
    clean_translation: text(out), corrupted_translation: text(badOut),
  };
}
