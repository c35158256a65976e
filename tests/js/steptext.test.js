// steptext.js and beam.js's labels: pieces joined into words, a step's choice in words, what a forced word changed.
import test from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.js";

const AL = await load("core.js", "beam.js", "steptext.js");
const texts = (words) => words.map((w) => w.text);

test("wordsOf joins a ▁-marked piece with the pieces that continue it", () => {
  const words = AL.wordsOf(["▁A", "▁bi", "ke", "▁is", "▁rid", "ing", ".", "</s>"]);
  assert.deepEqual(texts(words), ["A", "bike", "is", "riding", ".", "</s>"]);
  assert.deepEqual(words.map((w) => w.span), [[0], [1, 2], [3], [4, 5], [6], [7]]);
});

test("wordsOf: punctuation and <s>, </s> stand alone, and the piece after them starts a word", () => {
  assert.deepEqual(texts(AL.wordsOf(["<s>", "ke"])), ["<s>", "ke"]);
  assert.deepEqual(texts(AL.wordsOf(["▁don", "'", "t"])), ["don", "'", "t"]);
  assert.deepEqual(texts(AL.wordsOf(["▁Hund", ",", "▁Katze"])), ["Hund", ",", "Katze"]);
  assert.deepEqual(AL.wordsOf([]), []);
});

test("sentenceOf writes the pieces as text: no specials, no space before punctuation", () => {
  assert.equal(AL.sentenceOf(["▁A", "▁dog", "▁runs", ".", "</s>"]), "A dog runs.");
  assert.equal(AL.sentenceOf(["<s>", "▁Two", "▁dog", "s", "▁play", "!"]), "Two dogs play!");
  assert.equal(AL.glue("."), "");
  assert.equal(AL.glue("’s"), "");
  assert.equal(AL.glue("dog"), " ");
});

test("nodeLabel names the beam's pieces as a reader does", () => {
  assert.equal(AL.nodeLabel("<s>"), "start");
  assert.equal(AL.nodeLabel("</s>"), "end");
  assert.equal(AL.nodeLabel("▁dog"), "dog");
  assert.equal(AL.nodeLabel("\u0120the"), "the"); // a raw byte-level piece is named as a word too
  assert.equal(AL.nodeLabel("s"), "s");
});

test("changedWords marks what is outside a longest common subsequence", () => {
  assert.deepEqual(AL.changedWords(["a", "dog", "runs"], ["a", "cat", "runs", "fast"]),
    { before: [false, true, false], after: [false, true, false, true] });
  assert.deepEqual(AL.changedWords(["same"], ["same"]), { before: [false], after: [false] });
  assert.deepEqual(AL.changedWords([], ["new"]), { before: [], after: [true] });
});

test("percent: whole percentages, and <1% for a tiny but real chance", () => {
  assert.equal(AL.percent(0.876), "88%");
  assert.equal(AL.percent(0.004), "<1%");
  assert.equal(AL.percent(0), "0%");
  assert.equal(AL.percent(1), "100%");
});

test("describeChoice says how sure the model was, how spread its doubt, and what beam search did", () => {
  const step = (top, entropy, written, forced) => ({ top: [top], entropy: [entropy], ids: [written[1]],
    tokens: [written[0]], forced: [forced] });
  assert.equal(AL.describeChoice(step([["▁dog", 5, 0.9], ["▁cat", 6, 0.05]], Math.log(2), ["▁dog", 5], false), 0),
    "The model was sure: \u2018dog\u2019 (90%). Its doubt is like choosing among 2.0 equally likely pieces.");
  const torn = AL.describeChoice(step([["▁dog", 5, 0.45], ["▁cat", 6, 0.4]], Math.log(12.3), ["▁cat", 6], false), 0);
  assert.match(torn, /^The model was torn between \u2018dog\u2019 \(45%\) and \u2018cat\u2019 \(40%\)\. /);
  assert.match(torn, / among 12 equally likely pieces\. Beam search wrote \u2018cat\u2019 instead/);
  const forced = AL.describeChoice(step([["▁dog", 5, 0.3], ["▁cat", 6, 0.1]], 1, ["▁cat", 6], true), 0);
  assert.match(forced, /^This piece was forced\. The model was unsure: its best guess \u2018dog\u2019 got only 30%\./);
  assert.doesNotMatch(forced, /Beam search/);
});
