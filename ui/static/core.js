// @ts-check
/* Attention Lens, data side of the client viewer: decode one explanation, pick a map, merge
   pieces into words, colours and the words the page uses to explain a map. No DOM here.

   An explanation (built by viz.sentence_payload on the server) holds, per sentence, the tokens,
   their word groups and every map as base64 bytes (weight * 255), row-major
   (layer, head, row, col). Rows attend; columns are attended to. The words are the catalogue's (i18n.js), read
   when they are shown. */
import { fixed, t } from "./i18n.js";

/** The three kinds of map: their names (in the page's locale, read when shown) and the axes of their rows and
    columns. @type {Record<Kind, KindInfo>} */
export const KINDS = {
  cross: { get label() { return t("core.kind.cross.label"); }, get short() { return t("core.kind.cross.short"); },
    rows: "tgt", cols: "src" },
  encoder: { get label() { return t("core.kind.encoder.label"); }, get short() { return t("core.kind.encoder.short"); },
    rows: "src", cols: "src" },
  decoder: { get label() { return t("core.kind.decoder.label"); }, get short() { return t("core.kind.decoder.short"); },
    rows: "tgt", cols: "in" },
};
/** The special tokens, each with what it is. */
export const SPECIAL = {
  get "<s>"() { return t("core.special.start"); },
  get "</s>"() { return t("core.special.end"); },
  get "<pad>"() { return t("core.special.pad"); },
  get "<unk>"() { return t("core.special.unknown"); },
};

/** Bytes of every map of one kind of a sentence, decoded once and kept on the sentence. */
export function mapBytes(sentence, kind) {
  sentence._bytes = sentence._bytes || {};
  if (!sentence._bytes[kind]) {
    const text = atob(sentence.maps[kind]);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    sentence._bytes[kind] = bytes;
  }
  return sentence._bytes[kind];
}

/** Display label of each piece: '▁' dropped; a piece that continues a word starts with '+'. */
export function pieceLabels(sentence, axis) {
  const tokens = sentence.tokens[axis];
  const starts = new Set(sentence.words[axis].map((w) => w[1][0]));
  return tokens.map((t, i) => {
    if (SPECIAL[t]) return t;
    const text = t.replace(/▁/g, "");
    return starts.has(i) ? text : "+" + text;
  });
}

/** Groups of one axis: pieces (one group per token) or words (merged pieces). */
function groups(sentence, axis, level) {
  if (level === "words") return sentence.words[axis].map((w) => ({ label: w[0], span: w[1] }));
  return pieceLabels(sentence, axis).map((label, i) => ({ label: label, span: [i] }));
}

/** One map as numbers: {values (rows*cols, 0..1), masked, rowLabels, colLabels, max, ...}.
    head = null means the mean over heads. Words: a row word averages its pieces' rows and a
    column word sums its pieces' columns, so every row still adds up to 1. */
export function selectMap(explanation, sentence, kind, layer, head, level) {
  const info = KINDS[kind];
  const H = explanation.heads;
  const R = sentence.tokens[info.rows].length, C = sentence.tokens[info.cols].length;
  const bytes = mapBytes(sentence, kind);
  const piece = new Float32Array(R * C);
  const heads = head === null ? [...Array(H).keys()] : [head];
  for (const h of heads) {
    const offset = (layer * H + h) * R * C;
    for (let i = 0; i < R * C; i++) piece[i] += bytes[offset + i];
  }
  const scale = 1 / (255 * heads.length);
  for (let i = 0; i < R * C; i++) piece[i] *= scale;
  const rowGroups = groups(sentence, info.rows, level), colGroups = groups(sentence, info.cols, level);
  const n = rowGroups.length, m = colGroups.length;
  const values = new Float32Array(n * m), masked = new Uint8Array(n * m);
  let max = 0;
  for (let r = 0; r < n; r++) {
    const rows = rowGroups[r].span;
    for (let c = 0; c < m; c++) {
      const cols = colGroups[c].span;
      let sum = 0;
      for (const i of rows) for (const j of cols) sum += piece[i * C + j];
      values[r * m + c] = sum / rows.length;
      // The decoder reads input j at step i only when j <= i: a cell wholly in the future is masked.
      if (kind === "decoder" && cols[0] > rows[rows.length - 1]) masked[r * m + c] = 1;
      if (!masked[r * m + c]) max = Math.max(max, values[r * m + c]);
    }
  }
  return {
    kind: kind, layer: layer, head: head, level: level, rows: n, cols: m, values: values, masked: masked,
    max: max || 1, rowLabels: rowGroups.map((g) => g.label), colLabels: colGroups.map((g) => g.label),
  };
}

// Viridis at 9 stops, interpolated to 256: perceptually even, readable for colour-blind eyes,
// and dark-to-bright on both light and dark pages.
const STOPS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"];
export const LUT = (function () {
  const rgb = STOPS.map((h) => [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16)));
  const lut = [];
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (rgb.length - 1), k = Math.min(Math.floor(x), rgb.length - 2), f = x - k;
    lut.push(rgb[k].map((v, c) => Math.round(v + f * (rgb[k + 1][c] - v))));
  }
  return lut;
})();
export function colour(v) {
  const c = LUT[Math.max(0, Math.min(255, Math.round(v * 255)))];
  return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
}

/** The one diverging scale for every signed quantity (why not, patching): v in [-1, 1], blue for, red against,
    fading to nothing at 0 (RdBu's ends: readable for colour-blind eyes, on light and dark pages). */
export function diverging(v) {
  const a = Math.min(1, Math.abs(v));
  return (v >= 0 ? "rgba(33, 102, 172, " : "rgba(178, 24, 43, ") + (0.08 + 0.82 * a).toFixed(2) + ")";
}

/** The layer a map shows (from 0): the chosen one, clamped to this kind's layers; null chooses the last.
    A chosen layer survives a change of kind and comes back when the kind has it again. */
export function shownLayer(chosen, layers) {
  return chosen === null ? layers - 1 : Math.min(chosen, layers - 1);
}

export const headName = (head) => (head === null ? t("core.mean_of_heads") : t("core.head", { n: head + 1 }));

/** The hover sentence for one cell, in words. */
export function describeCell(map, r, c) {
  const weight = fixed(map.values[r * map.cols + c], 2), row = map.rowLabels[r], col = map.colLabels[c];
  if (map.masked[r * map.cols + c]) return t("core.cell.masked", { row, col });
  if (map.kind === "cross") return t("core.cell.cross", { row, col, weight });
  if (map.kind === "decoder") return t("core.cell.decoder", { row, col, weight });
  return t("core.cell.encoder", { row, col, weight });
}

/** How to read a map of this kind, for someone who knows neural networks but not Transformers (HTML). */
export function howToRead(kind, layers, heads) {
  const common = t("core.read.common", { layers, heads });
  if (kind === "cross") return t("core.read.cross", { common });
  if (kind === "encoder") return t("core.read.encoder", { common });
  return t("core.read.decoder", { common });
}

/** What words and pieces are, under every map (HTML). */
export const piecesNote = () => t("core.pieces_note");

/** The file name of what is on screen: kind, layer, head, sentence, level. */
export function fileName(map, sentenceIndex, ext) {
  const head = map.head === null ? "mean" : "head" + (map.head + 1);
  return "attention-lens_sentence" + (sentenceIndex + 1) + "_" + map.kind + "_layer" + (map.layer + 1) + "_" +
    head + "_" + map.level + "." + ext;
}

/** The model that translated a sentence ("default", "everyday"), for the views that ask the server about it. */
export const modelOf = (sentence) => (sentence && sentence.route && sentence.route.model) || "auto";

const SUBLAYERS = { "self-attention": "self", "cross-attention": "cross", "feed-forward": "ff" };
/** A stage of the model as lens/stream.py and lens/patching.py name it ("embedding", "layer 2", "layer 2
    cross-attention"), in the page's language; a name of another shape as it is. */
export function stageName(stage) {
  const m = /^layer (\d+)(?: (self-attention|cross-attention|feed-forward))?$/.exec(stage);
  if (stage === "embedding") return t("core.stage.embedding");
  if (!m) return stage;
  const layer = m[1], sublayer = SUBLAYERS[m[2] || ""];
  return sublayer === "self" ? t("core.stage.self", { layer }) : sublayer === "cross" ? t("core.stage.cross", { layer })
    : sublayer === "ff" ? t("core.stage.ff", { layer }) : t("core.stage.layer", { layer });
}
