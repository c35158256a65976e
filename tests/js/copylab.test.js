// copylab.js: the loss floor a label-smoothed copy task cannot go below, drawn under the curve.
import test from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.js";

const AL = await load("copylab.js", "backprop.js");

test("the floor is the entropy of the smoothed target: 0.62 for 24 symbols and smoothing 0.1", () => {
  assert.ok(Math.abs(AL.lossFloor(0.1, 24) - 0.6163) < 1e-3, String(AL.lossFloor(0.1, 24)));
  assert.equal(AL.lossFloor(0, 24), 0); // no smoothing: a perfect copier reaches 0
});

test("the floor is what the loss of backprop.js gives a model exactly as unsure as the smoothing asks", () => {
  const V = 24, eps = 0.1, target = 5, right = 1 - eps + eps / V, other = eps / V;
  const logits = new Float32Array(V).map((_, c) => Math.log(c === target ? right : other));
  const loss = new AL.Tape().crossEntropy(AL.node(logits, [1, V]), [target], eps, 1).v[0];
  assert.ok(Math.abs(loss - AL.lossFloor(eps, V)) < 1e-4, `${loss} vs ${AL.lossFloor(eps, V)}`);
});
