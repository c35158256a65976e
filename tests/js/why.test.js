// why.js and qkv.js: how many times as likely, as a reader writes it; the column Q/K/V opens on.
import test from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.js";

const { ratio } = await load("why.js");

test("a ratio has two significant digits and never an exponent", () => {
  assert.equal(ratio(590123), "590,000");
  assert.equal(ratio(123), "120");
  assert.equal(ratio(1.234), "1.2");
  assert.equal(ratio(Math.exp(30)), "11,000,000,000,000");
  for (const x of [2.5, 99.4, 1e5, 3.3e9]) assert.ok(!/e/i.test(ratio(x)), ratio(x));
});

const { likeliestWord } = await load("qkv.js");

test("Q/K/V opens on the word with the most attention, not on the mark heads rest on", () => {
  const tokens = ["▁Ein", "▁Hund", "</s>"];
  assert.equal(likeliestWord({ column_tokens: tokens, weights: [0.1, 0.3, 0.6], mask: [true, true, true] }), 1);
  assert.equal(likeliestWord({ column_tokens: tokens, weights: [0.5, 0.3, 0.2], mask: [false, true, true] }), 1,
    "a masked column is never shown first");
  assert.equal(likeliestWord({ column_tokens: ["<s>"], weights: [1], mask: [true] }), 0, "nothing else: the mark");
});
