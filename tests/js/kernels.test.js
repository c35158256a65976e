// kernels.wat / kernels.wasm: the committed bytes are the .wat assembled, and the SIMD product equals the sums in JS.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { load, STATIC } from "./load.js";
import { assemble } from "../../tools/build_kernels.js";

test("kernels.wasm is kernels.wat assembled (npm run wasm)", async () => {
  assert.deepEqual(await assemble(), fs.readFileSync(path.join(STATIC, "kernels.wasm")));
});

test("the kernel's product equals the model's JS product, with and without bias", async () => {
  const AL = await load("transformer.js");
  const random = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed) * 0.5);
  const config = { d_model: 32, n_heads: 4, d_ff: 64, vocab_size: 48, max_len: 16, n_encoder_layers: 1, n_decoder_layers: 1,
    norm_first: false, pad_id: 0, bos_id: 1, eos_id: 2 };
  const tensors = {}, D = 32, F = 64;
  const add = (name, shape, seed) => { tensors[name] = { shape, data: random(shape.reduce((a, b) => a * b, 1), seed) }; };
  let seed = 1;
  add("embed.weight", [48, D], seed++);
  for (const p of ["encoder_layers.0.self_attn", "decoder_layers.0.self_attn", "decoder_layers.0.cross_attn"]) {
    add(p + ".in_proj.weight", [3 * D, D], seed++); add(p + ".in_proj.bias", [3 * D], seed++);
    add(p + ".out_proj.weight", [D, D], seed++); add(p + ".out_proj.bias", [D], seed++);
  }
  for (const p of ["encoder_layers.0", "decoder_layers.0"]) {
    add(p + ".ff.linear1.weight", [F, D], seed++); add(p + ".ff.linear1.bias", [F], seed++);
    add(p + ".ff.linear2.weight", [D, F], seed++); add(p + ".ff.linear2.bias", [D], seed++);
    for (const n of ["norm1", "norm2", "norm3"]) { add(`${p}.${n}.weight`, [D], seed++); add(`${p}.${n}.bias`, [D], seed++); }
  }
  const copy = () => Object.fromEntries(Object.entries(tensors).map(([k, t]) => [k, { shape: t.shape, data: t.data.slice() }]));
  const plain = new AL.Transformer(config, copy());
  const run = (model) => { const enc = model.encode([5, 9, 2]); const s = model.step(enc, model.cache(4), 1); return [enc.memory, s.logits]; };
  const [m1, l1] = run(plain);
  const fast = new AL.Transformer(config, copy(), await AL.loadKernels(fs.readFileSync(path.join(STATIC, "kernels.wasm"))));
  assert.equal(fast.kernel, true);
  const [m2, l2] = run(fast);
  for (const [a, b] of [[m1, m2], [l1, l2]]) {
    assert.equal(a.length, b.length);
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) < 1e-4, `${i}: ${a[i]} against ${b[i]}`);
  }
});

test("a step of several rows at once (stepMany) gives each row what step() gives it, number for number", async () => {
  const AL = await load("transformer.js");
  const config = { d_model: 32, n_heads: 4, d_ff: 64, vocab_size: 48, max_len: 16, n_encoder_layers: 1, n_decoder_layers: 2,
    norm_first: false, pad_id: 0, bos_id: 1, eos_id: 2 };
  const tensors = {}, D = 32, F = 64;
  let seed = 5;
  const add = (name, shape) => { const n = shape.reduce((a, b) => a * b, 1), s = seed++;
    tensors[name] = { shape, data: Float32Array.from({ length: n }, (_, i) => Math.sin(i * 3.7 + s) * 0.3) }; };
  add("embed.weight", [48, D]);
  for (const p of ["encoder_layers.0.self_attn", "decoder_layers.0.self_attn", "decoder_layers.0.cross_attn",
    "decoder_layers.1.self_attn", "decoder_layers.1.cross_attn"]) {
    add(p + ".in_proj.weight", [3 * D, D]); add(p + ".in_proj.bias", [3 * D]);
    add(p + ".out_proj.weight", [D, D]); add(p + ".out_proj.bias", [D]);
  }
  for (const p of ["encoder_layers.0", "decoder_layers.0", "decoder_layers.1"]) {
    add(p + ".ff.linear1.weight", [F, D]); add(p + ".ff.linear1.bias", [F]);
    add(p + ".ff.linear2.weight", [D, F]); add(p + ".ff.linear2.bias", [D]);
    for (const n of ["norm1", "norm2", "norm3"]) { add(`${p}.${n}.weight`, [D]); add(`${p}.${n}.bias`, [D]); }
  }
  for (const kernels of [null, await AL.loadKernels(fs.readFileSync(path.join(STATIC, "kernels.wasm")))]) {
    const model = new AL.Transformer(config, Object.fromEntries(Object.entries(tensors).map(([k, t]) => [k, { shape: t.shape, data: t.data.slice() }])), kernels);
    const enc = model.encode([5, 9, 11, 2]), one = [model.cache(4), model.cache(4), model.cache(4)], many = one.map(() => model.cache(4));
    for (const tokens of [[1, 1, 1], [7, 8, 9], [10, 3, 7]]) {
      const alone = tokens.map((tok, r) => model.step(enc, one[r], tok)), together = model.stepMany(enc, many, tokens);
      tokens.forEach((_, r) => {
        assert.deepEqual(Array.from(together[r].logits), Array.from(alone[r].logits));
        assert.deepEqual(together[r].crossRows.map((w) => Array.from(w)), alone[r].crossRows.map((w) => Array.from(w)));
        assert.deepEqual(together[r].selfRows.map((w) => Array.from(w)), alone[r].selfRows.map((w) => Array.from(w)));
      });
    }
  }
});
