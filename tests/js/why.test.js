// why.js: how many times as likely, written as a reader writes it.
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
