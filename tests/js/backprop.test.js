// The hand-written backward pass (ui/static/backprop.js) against finite differences: for a small network made of
// every operation the copy lab uses, each parameter's gradient is the slope of the loss when that parameter moves.
// And the copy lab (ui/static/copytrain.js) learns: its loss falls within a few dozen steps.
import test from "node:test";
import assert from "node:assert/strict";
import { Tape, node } from "../../ui/static/backprop.js";
import { checkedSettings, trainCopy } from "../../ui/static/copytrain.js";

let seed = 11;
const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
const filled = (shape) => node(Float64Array.from({ length: shape.reduce((a, b) => a * b, 1) }, random), shape);

/** A loss that runs through every operation: embedding, linear, attention (causal and not), add, ReLU,
    LayerNorm, the tied output layer and label-smoothed cross-entropy. */
function network(p, tape) {
  const x = tape.embed(p.E, [1, 3, 2, 4], 2, new Float32Array(4 * 8).fill(0.1));
  const m = tape.embed(p.E, [4, 0, 2], 2, new Float32Array(3 * 8));
  const q = tape.linear(x, p.Wq, p.bq), self = tape.attention(q, tape.linear(x, p.Wk, null), x, 2, true);
  const cross = tape.attention(tape.linear(self, p.Wq, p.bq), m, tape.linear(m, p.Wk, null), 2, false);
  const y = tape.layerNorm(tape.add(tape.relu(cross), x), p.g, p.b);
  return tape.crossEntropy(tape.linear(y, p.E, null), [2, 0, 1, 4], 0.1, 4);
}

/** Every `every`-th parameter of `p` moved by ±h: the backward pass's gradient is the loss's slope, within
    `absolute` + `relative` × |slope|. Returns how many were checked. */
function checkSlopes(p, network, { every, h, absolute, relative }) {
  const tape = new Tape();
  tape.backward(network(p, tape));
  const loss = () => network(p, new Tape()).v[0];
  let checked = 0;
  for (const [name, t] of Object.entries(p)) {
    for (let i = 0; i < t.v.length; i += every) {
      const keep = t.v[i];
      t.v[i] = keep + h; const up = loss();
      t.v[i] = keep - h; const down = loss();
      t.v[i] = keep;
      const slope = (up - down) / (2 * h);
      assert.ok(Math.abs(slope - t.g[i]) <= absolute + relative * Math.abs(slope), `${name}[${i}]: backward ${t.g[i]}, slope ${slope}`);
      checked++;
    }
  }
  return checked;
}

test("every gradient of the backward passis the finite-difference slope of the loss", () => {
  const p = { E: filled([5, 8]), Wq: filled([8, 8]), bq: filled([8]), Wk: filled([8, 8]), g: filled([8]), b: filled([8]) };
  const checked = checkSlopes(p, network, { every: 3, h: 1e-2, absolute: 2e-3, relative: 0.02 });
  assert.ok(checked > 60);
});

/** The lab's operations (trainer.js's switches): learned positions (a node), the first rows of the memory as queries
    (the swapped cross-attention), heads split by view alone, no ÷√dk. */
function labNetwork(p, tape) {
  const x = tape.embed(p.E, [1, 3, 2, 4], 1, p.P);
  const m = tape.embed(p.E, [4, 0, 2, 1, 3], 2, null);
  const self = tape.attention(tape.linear(x, p.Wq, p.bq), tape.linear(x, p.Wk, null), x, 2, true, { view: true });
  const q = tape.rows(m, 4), cross = tape.attention(q, self, tape.linear(self, p.Wk, null), 4, false, { scale: false, view: true });
  return tape.crossEntropy(tape.linear(tape.add(cross, x), p.E, null), [2, 0, 1, 4], 0, 4);
}

test("the lab's operations have the finite-difference slope of the loss too", () => {
  const p = { E: filled([5, 8]), P: filled([4, 8]), Wq: filled([8, 8]), bq: filled([8]), Wk: filled([8, 8]) };
  const checked = checkSlopes(p, labNetwork, { every: 2, h: 1e-5, absolute: 1e-6, relative: 1e-4 });
  assert.ok(checked > 80);
});

test("a lab run that diverges is stopped at that step and says so, its loss the worst", async () => {
  const { train } = await import("../../ui/static/trainer.js");
  const { finalOf } = await import("../../ui/static/lab.js");
  const last = await train({ lr: 1.0, schedule: "constant", steps: 60, norm: "none" }, () => {});
  assert.ok(last.done && last.diverged_at >= 1 && last.diverged_at < 60 && last.step === last.diverged_at, JSON.stringify(last.diverged_at));
  assert.equal(finalOf(last).loss, Infinity);
});

test("the copy lab's settings are held to the server's caps", () => {
  assert.throws(() => checkedSettings({ n_layers: 3, n_heads: 4, d_model: 64, lr: 3e-3, steps: 300 }), /n_layers must be between 1 and 2/);
  assert.throws(() => checkedSettings({ n_layers: 2, n_heads: 4, d_model: 50, lr: 3e-3, steps: 300 }), /must be divisible/);
  assert.throws(() => checkedSettings({ n_layers: 2, n_heads: 4, d_model: 64, lr: "x", steps: 300 }), /lr must be between/);
});

test("the copy lab learns in a few dozen steps: the loss falls and the reports carry the map", async () => {
  const reports = [];
  const last = await trainCopy({ n_layers: 1, n_heads: 2, d_model: 32, lr: 5e-3, steps: 60 }, (r) => reports.push(r));
  assert.equal(last.step, 60);
  assert.equal(reports.length, 6);
  assert.ok(last.done && !last.stopped_by_time);
  const first = last.losses[0][1], end = last.losses.slice(-10).reduce((a, [, l]) => a + l, 0) / 10;
  assert.ok(end < first - 0.8, `the loss went from ${first} to ${end}`);
  assert.equal(last.map.sentences[0].tokens.src.at(-1), "</s>");
  assert.equal(last.examples.length, 4);
});
