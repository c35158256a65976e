// core.js and draw.js's pure part: decoding a map, picking kind/layer/head, merging pieces into words, colours.
import test from "node:test";
import assert from "node:assert/strict";
import { load, mapOf } from "./load.js";

const AL = await load("core.js", "draw.js");
const close = (actual, expected, what) => assert.ok(Math.abs(actual - expected) < 1e-6, `${what}: ${actual} != ${expected}`);
const code = (l, h, r, c) => l * 100 + h * 50 + r * 10 + c; // every byte says where it sits

/** Three pieces each way, every piece its own word; every kind 2 layers x 2 heads, bytes from `code`. */
function fixture() {
  const src = ["▁Ein", "▁Hund", "</s>"], tgt = ["▁A", "▁dog", "</s>"], input = ["<s>", "▁A", "▁dog"];
  const alone = (tokens) => tokens.map((t, i) => [t.replace("▁", ""), [i]]);
  const maps = { cross: mapOf(2, 2, 3, 3, code), encoder: mapOf(2, 2, 3, 3, code), decoder: mapOf(2, 2, 3, 3, code) };
  return {
    explanation: { heads: 2, layers: { cross: 2, encoder: 2, decoder: 2 } },
    sentence: { tokens: { src, tgt, in: input }, words: { src: alone(src), tgt: alone(tgt), in: alone(input) }, maps },
  };
}

test("mapBytes decodes base64 once and keeps the bytes on the sentence", () => {
  const { sentence } = fixture();
  const bytes = AL.mapBytes(sentence, "cross");
  assert.equal(bytes.length, 2 * 2 * 3 * 3);
  assert.equal(bytes[0], 0);
  assert.equal(bytes[bytes.length - 1], code(1, 1, 2, 2));
  assert.equal(AL.mapBytes(sentence, "cross"), bytes, "decoded once");
});

test("selectMap picks one layer and head, row-major (layer, head, row, col)", () => {
  const { explanation, sentence } = fixture();
  const map = AL.selectMap(explanation, sentence, "cross", 1, 0, "pieces");
  assert.equal(map.rows, 3);
  assert.equal(map.cols, 3);
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) close(map.values[r * 3 + c], code(1, 0, r, c) / 255, `cell ${r},${c}`);
  assert.deepEqual([map.kind, map.layer, map.head, map.level], ["cross", 1, 0, "pieces"]);
  close(map.max, code(1, 0, 2, 2) / 255, "max");
});

test("selectMap with head null is the mean of the heads", () => {
  const { explanation, sentence } = fixture();
  const map = AL.selectMap(explanation, sentence, "encoder", 0, null, "pieces");
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) close(map.values[r * 3 + c], (25 + r * 10 + c) / 255, `cell ${r},${c}`);
  assert.equal(map.head, null);
});

test("each kind reads its own axes: cross is English x German, encoder German x German, decoder English x input", () => {
  const { explanation, sentence } = fixture();
  assert.deepEqual(AL.selectMap(explanation, sentence, "cross", 0, 0, "pieces").colLabels, ["Ein", "Hund", "</s>"]);
  assert.deepEqual(AL.selectMap(explanation, sentence, "cross", 0, 0, "pieces").rowLabels, ["A", "dog", "</s>"]);
  assert.deepEqual(AL.selectMap(explanation, sentence, "encoder", 0, 0, "pieces").rowLabels, ["Ein", "Hund", "</s>"]);
  assert.deepEqual(AL.selectMap(explanation, sentence, "decoder", 0, 0, "pieces").colLabels, ["<s>", "A", "dog"]);
  assert.deepEqual(Object.keys(AL.KINDS).sort(), ["cross", "decoder", "encoder"]);
});

test("decoder self-attention masks every cell in the future, and the maximum leaves them out", () => {
  const { explanation, sentence } = fixture();
  sentence.maps.decoder = mapOf(1, 1, 3, 3, (l, h, r, c) => (c > r ? 255 : 10 * (r + c))); // the future bright
  const map = AL.selectMap({ heads: 1 }, sentence, "decoder", 0, 0, "pieces");
  assert.deepEqual([...map.masked], [0, 1, 1, 0, 0, 1, 0, 0, 0]);
  close(map.max, 40 / 255, "max over the cells it may read");
  assert.ok(AL.selectMap(explanation, sentence, "cross", 1, 1, "pieces").masked.every((m) => m === 0));
});

test("words: a row word averages its pieces' rows, a column word sums its pieces' columns", () => {
  // 'bike' = ▁bi + ke attends to 'Fahrrad' = ▁Fahr + rad; each piece row adds up to 1.
  const rows = [[0.2, 0.6, 0.2], [0.4, 0.4, 0.2], [0, 0, 1]];
  const sentence = {
    tokens: { tgt: ["▁bi", "ke", "</s>"], src: ["▁Fahr", "rad", "</s>"] },
    words: { tgt: [["bike", [0, 1]], ["</s>", [2]]], src: [["Fahrrad", [0, 1]], ["</s>", [2]]] },
    maps: { cross: mapOf(1, 1, 3, 3, (l, h, r, c) => Math.round(rows[r][c] * 255)) },
  };
  const words = AL.selectMap({ heads: 1 }, sentence, "cross", 0, 0, "words");
  assert.deepEqual([words.rows, words.cols], [2, 2]);
  assert.deepEqual(words.rowLabels, ["bike", "</s>"]);
  assert.deepEqual(words.colLabels, ["Fahrrad", "</s>"]);
  close(words.values[0], (0.2 + 0.6 + 0.4 + 0.4) / 2, "bike <- Fahrrad");
  close(words.values[1], 0.2, "bike <- </s>");
  close(words.values[2], 0, "</s> <- Fahrrad");
  close(words.values[3], 1, "</s> <- </s>");
  for (let r = 0; r < 2; r++) close(words.values[2 * r] + words.values[2 * r + 1], 1, `word row ${r} adds up to 1`);
  const pieces = AL.selectMap({ heads: 1 }, sentence, "cross", 0, 0, "pieces");
  assert.deepEqual(pieces.rowLabels, ["bi", "+ke", "</s>"]);
});

test("pieceLabels drops the word mark and marks a piece that continues a word with +", () => {
  const sentence = { tokens: { src: ["▁Fahr", "rad", "▁fährt", "</s>"] },
    words: { src: [["Fahrrad", [0, 1]], ["fährt", [2]], ["</s>", [3]]] }, maps: {} };
  assert.deepEqual(AL.pieceLabels(sentence, "src"), ["Fahr", "+rad", "fährt", "</s>"]);
});

test("shownLayer: null is the last layer; a chosen layer is kept, clamped to the kind's layers", () => {
  assert.equal(AL.shownLayer(null, 3), 2);
  assert.equal(AL.shownLayer(1, 3), 1);
  assert.equal(AL.shownLayer(5, 3), 2);
  assert.equal(AL.shownLayer(0, 1), 0);
});

test("colour: viridis from dark purple at 0 to yellow at 1, clamped, brighter as it rises", () => {
  assert.equal(AL.colour(0), "rgb(68,1,84)"); // #440154
  assert.equal(AL.colour(1), "rgb(253,231,37)"); // #fde725
  assert.equal(AL.colour(-3), AL.colour(0));
  assert.equal(AL.colour(7), AL.colour(1));
  assert.equal(AL.LUT.length, 256);
  for (let i = 1; i < 256; i++) assert.ok(AL.LUT[i][1] >= AL.LUT[i - 1][1], `green rises at ${i}`);
  assert.equal(AL.colour(0.5), "rgb(" + AL.LUT[128].join(",") + ")");
});

test("shade: per map the brightest cell is 1; fixed, a weight is its own shade", () => {
  close(AL.shade({ max: 0.6 }, 0.3, "auto"), 0.5, "auto");
  close(AL.shade({ max: 0.6 }, 0.6, "auto"), 1, "auto at the maximum");
  close(AL.shade({ max: 0.6 }, 0.3, "fixed"), 0.3, "fixed");
});

test("describeCell says what a cell means for each kind, and why a masked cell is empty", () => {
  const { explanation, sentence } = fixture();
  const cross = AL.selectMap(explanation, sentence, "cross", 0, 0, "pieces");
  assert.equal(AL.describeCell(cross, 1, 1), "While writing \u2018dog\u2019, the model drew " +
    (code(0, 0, 1, 1) / 255).toFixed(2) + " of its attention from the German \u2018Hund\u2019.");
  const decoder = AL.selectMap(explanation, sentence, "decoder", 0, 0, "pieces");
  assert.match(AL.describeCell(decoder, 0, 2), /^Masked: while writing \u2018A\u2019, \u2018dog\u2019 was not written yet/);
});

test("headName and fileName name what is on screen", () => {
  const { explanation, sentence } = fixture();
  assert.equal(AL.headName(null), "mean of heads");
  assert.equal(AL.headName(0), "head 1");
  const map = AL.selectMap(explanation, sentence, "encoder", 1, null, "words");
  assert.equal(AL.fileName(map, 0, "png"), "attention-lens_sentence1_encoder_layer2_mean_words.png");
  assert.equal(AL.fileName(AL.selectMap(explanation, sentence, "cross", 0, 1, "pieces"), 2, "svg"),
    "attention-lens_sentence3_cross_layer1_head2_pieces.svg");
});

test("shortLabel keeps 24 characters at most; hitMatrix finds the cell under a point", () => {
  assert.equal(AL.shortLabel("Hund"), "Hund");
  const long = "x".repeat(30);
  assert.equal(AL.shortLabel(long), "x".repeat(23) + "\u2026");
  const lay = { cell: 10, left: 40, top: 20, width: 100, height: 60 }, map = { rows: 3, cols: 4 };
  assert.deepEqual(AL.hitMatrix(lay, map, 45, 25), [0, 0]);
  assert.deepEqual(AL.hitMatrix(lay, map, 79, 49), [2, 3]);
  assert.deepEqual(AL.hitMatrix(lay, map, 10, 35), [1, -1], "a row label");
  assert.equal(AL.hitMatrix(lay, map, 45, 55), null, "below the rows");
  assert.equal(AL.hitMatrix(lay, map, 85, 25), null, "right of the columns");
});

test("one diverging scale: blue for, red against, its strength from |v|, clamped to 1", () => {
  assert.match(AL.diverging(0.5), /^rgba\(33, 102, 172, /);
  assert.match(AL.diverging(-0.5), /^rgba\(178, 24, 43, /);
  const alpha = (c) => +c.slice(c.lastIndexOf(",") + 1, -1);
  assert.ok(alpha(AL.diverging(0)) < alpha(AL.diverging(0.5)) && alpha(AL.diverging(0.5)) < alpha(AL.diverging(1)));
  assert.equal(AL.diverging(3), AL.diverging(1));
  assert.equal(alpha(AL.diverging(-1)), alpha(AL.diverging(1)));
});

