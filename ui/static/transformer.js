// @ts-check
// twin of: model/transformer.py, model/layers.py, model/attention.py (tests/test_site.py)
/* Attention Lens, the model in the page: the encoder-decoder Transformer of model/transformer.py, by hand, from
   the checkpoint's weights (a safetensors file, fp16 or fp32), computing in fp32. Post-LayerNorm as the shipped
   config has it (norm_first false): x = LayerNorm(x + Sublayer(x)). One embedding, scaled by sqrt(D), is the
   German's, the English's and the output layer's.

   The decoder runs one step at a time over a key/value cache, and every step returns its attention rows (each
   layer and head), so a translation's maps come out of its own steps: the rows of the maps the server reads in
   one teacher-forced pass (tests/test_site.py holds them to 1e-3). `read` hooks let the inside views (Q/K/V, the
   logit lens) see what they need, named as model/taps.py names them.

   Shape legend (row-major Float32Arrays): S source length, T steps, D model width, H heads, dk = D / H, V vocabulary. */
/** fp16 bits -> a number. */
function half(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}
const HALF = new Float32Array(65536);
for (let h = 0; h < 65536; h++) HALF[h] = half(h);

/** A safetensors file's tensors as fp32 arrays: {name: {shape, data}}, an int8 matrix dequantised with its row
    scales (ui/row_int8.py). Refuses what it cannot read, by name. */
export function readSafetensors(buffer) {
  const view = new DataView(buffer);
  if (buffer.byteLength < 8) throw new Error("the weights file is too short to be safetensors");
  const length = Number(view.getBigUint64(0, true));
  if (8 + length > buffer.byteLength) throw new Error("the weights file's header runs past its end");
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, length)));
  const start = 8 + length, out = /** @type {Record<string, {shape: number[], data: Float32Array}>} */ ({});
  const bytes = { F16: 2, F32: 4, I8: 1 };
  for (const [name, t] of Object.entries(header)) {
    if (name === "__metadata__" || name.endsWith(SCALE)) continue;
    const [a, b] = t.data_offsets, n = t.shape.reduce((x, y) => x * y, 1);
    if (!(t.dtype in bytes)) throw new Error(`tensor ${name}: dtype ${t.dtype} is not int8, fp16 or fp32`);
    if (start + b > buffer.byteLength || b - a !== n * bytes[t.dtype]) throw new Error(`tensor ${name}: its bytes do not fit its shape`);
    const data = new Float32Array(n);
    if (t.dtype === "F16") {
      const bits = new Uint16Array(buffer.slice(start + a, start + b));
      for (let i = 0; i < n; i++) data[i] = HALF[bits[i]];
    } else if (t.dtype === "F32") data.set(new Float32Array(buffer.slice(start + a, start + b)));
    else rowsOfInt8(data, new Int8Array(buffer, start + a, n), t.shape, scalesOf(buffer, start, header, name, t.shape));
    if (!data.every(Number.isFinite)) throw new Error(`tensor ${name} holds NaN or infinity`);
    out[name] = { shape: t.shape, data };
  }
  return out;
}

const SCALE = ".row_scale"; // ui/row_int8.py: an int8 matrix's scales, one a row, under its name and this suffix

/** The fp32 scales of int8 matrix `name` (rows,), from the same file. */
function scalesOf(buffer, start, header, name, shape) {
  const s = header[name + SCALE];
  if (!s || s.dtype !== "F32" || shape.length !== 2 || s.shape.length !== 1 || s.shape[0] !== shape[0]
    || s.data_offsets[1] - s.data_offsets[0] !== shape[0] * 4 || start + s.data_offsets[1] > buffer.byteLength) {
    throw new Error(`int8 matrix ${name} has no fitting row scales (${name}${SCALE}, fp32, one a row)`);
  }
  return new Float32Array(buffer.slice(start + s.data_offsets[0], start + s.data_offsets[1]));
}

/** W[r, c] = q[r, c] x scale[r] into `data`, in fp32 as ui/row_int8.py's dequantised computes it. */
function rowsOfInt8(data, q, [rows, cols], scale) {
  for (let r = 0; r < rows; r++) {
    const s = scale[r];
    for (let c = 0, i = r * cols; c < cols; c++, i++) data[i] = Math.fround(q[i] * s);
  }
}

/** The SIMD product (kernels.wat), compiled from its bytes: {memory, linear, fresh}; `fresh()` gives another
    instance with a memory of its own, for a second model in the page. */
export async function loadKernels(bytes) {
  const { instance } = await WebAssembly.instantiate(bytes, {});
  return { memory: /** @type {WebAssembly.Memory} */ (instance.exports.memory), linear: /** @type {Function} */ (instance.exports.linear),
    fresh: () => loadKernels(bytes) };
}

const SCRATCH = 1 << 20; // bytes for x and for y in the kernel's memory: 256 rows of 1,024, or one row of the output layer

/** Every tensor copied into the kernel's memory once, then views of it in place of the arrays (the weights
    first, then a scratch region for x and one for y); the product runs there. (An int8 file's matrices arrive
    dequantised: the product is bounded by its arithmetic here, not by the bytes it reads, and an int8 product
    measured slower: bench/site.py.) */
function intoKernel(kernel, tensors) {
  const names = Object.keys(tensors), bytes = names.reduce((n, k) => n + tensors[k].data.length * 4, 0);
  const need = bytes + 2 * SCRATCH, have = kernel.memory.buffer.byteLength;
  if (need > have) kernel.memory.grow(Math.ceil((need - have) / 65536));
  const buffer = kernel.memory.buffer;
  let at = 0;
  for (const k of names) {
    const view = new Float32Array(buffer, at, tensors[k].data.length);
    view.set(tensors[k].data);
    tensors[k] = { shape: tensors[k].shape, data: view };
    at += view.length * 4;
  }
  return { ...kernel, x: at, y: at + SCRATCH, buffer };
}

/** y (rows, out) = x (rows, in) W^T + b in the kernel, when W lives in its memory and the sizes fit; else null. */
function kernelLinear(k, x, rows, W, b, inDim, outDim, from) {
  if (!k || inDim % 16 || rows * inDim * 4 > SCRATCH || rows * outDim * 4 > SCRATCH) return null;
  new Float32Array(k.buffer, k.x, rows * inDim).set(x.subarray(0, rows * inDim));
  k.linear(k.x, rows, W.byteOffset + from * inDim * 4, b ? b.byteOffset + from * 4 : 0, b ? 1 : 0, inDim, outDim, k.y);
  return new Float32Array(k.buffer, k.y, rows * outDim).slice();
}

const registered = []; // one a Transformer built with kernels (each model its own memory): the one holding W runs it

/** y (rows, out) = x (rows, in) W^T + b, W (out, in) as nn.Linear keeps it; `from` the first of W's rows used. */
export function linear(x, rows, W, b, inDim, outDim, from) {
  const fast = kernelLinear(registered.find((k) => k.buffer === W.buffer), x, rows, W, b, inDim, outDim, from || 0);
  if (fast) return fast;
  const y = new Float32Array(rows * outDim), o0 = from || 0;
  for (let r = 0; r < rows; r++) {
    const xr = r * inDim;
    for (let o = 0; o < outDim; o++) {
      const w = (o0 + o) * inDim;
      let s = b ? b[o0 + o] : 0;
      for (let i = 0; i < inDim; i++) s += x[xr + i] * W[w + i];
      y[r * outDim + o] = s;
    }
  }
  return y;
}

/** LayerNorm(a + b) of each row in place in a (eps 1e-5, as nn.LayerNorm). */
export function addNorm(a, b, rows, D, g, beta) {
  for (let r = 0; r < rows; r++) {
    const o = r * D;
    let mean = 0;
    for (let i = 0; i < D; i++) { a[o + i] += b[o + i]; mean += a[o + i]; }
    mean /= D;
    let v = 0;
    for (let i = 0; i < D; i++) { const d = a[o + i] - mean; v += d * d; }
    const inv = 1 / Math.sqrt(v / D + 1e-5);
    for (let i = 0; i < D; i++) a[o + i] = (a[o + i] - mean) * inv * g[i] + beta[i];
  }
  return a;
}

/** Softmax of row[0..n) in place; -Infinity entries get 0. */
function softmax(row, n) {
  let m = -Infinity;
  for (let i = 0; i < n; i++) if (row[i] > m) m = row[i];
  let s = 0;
  for (let i = 0; i < n; i++) { const e = row[i] === -Infinity ? 0 : Math.exp(row[i] - m); row[i] = e; s += e; }
  for (let i = 0; i < n; i++) row[i] /= s;
  return row;
}

export class Transformer {
  /** @param {any} config config.json @param {Record<string, {shape: number[], data: Float32Array}>} tensors
      @param {{memory: WebAssembly.Memory, linear: Function} | null} [kernels] the SIMD product (loadKernels) */
  constructor(config, tensors, kernels) {
    if (config.norm_first) throw new Error("this page runs post-LayerNorm checkpoints (norm_first false)");
    const kernel = kernels ? intoKernel(kernels, tensors) : null;
    if (kernel) registered.push(kernel);
    this.kernel = !!kernel; // the products run in the SIMD kernel
    this.config = config;
    const D = (this.D = config.d_model), H = (this.H = config.n_heads);
    this.dk = D / H; this.V = config.vocab_size; this.F = config.d_ff;
    /** @type {{encoder: number[][], decoder: number[][], cross: number[][]} | null} the heads switched off (kept) */
    this.heads = null;
    const get = (name, shape) => {
      const t = tensors[name];
      if (!t) throw new Error(`the weights have no tensor ${name}`);
      if (shape && t.shape.join() !== shape.join()) throw new Error(`tensor ${name} is ${t.shape.join("x")}, the config says ${shape.join("x")}`);
      return t.data;
    };
    this.embed = get("embed.weight", [this.V, D]);
    const attn = (p) => ({ W: get(p + ".in_proj.weight", [3 * D, D]), b: get(p + ".in_proj.bias", [3 * D]),
      Wo: get(p + ".out_proj.weight", [D, D]), bo: get(p + ".out_proj.bias", [D]) });
    const ff = (p) => ({ W1: get(p + ".linear1.weight", [this.F, D]), b1: get(p + ".linear1.bias"),
      W2: get(p + ".linear2.weight", [D, this.F]), b2: get(p + ".linear2.bias") });
    const norm = (p) => ({ g: get(p + ".weight", [D]), b: get(p + ".bias", [D]) });
    this.encoderLayers = [...Array(config.n_encoder_layers).keys()].map((i) => ({ self: attn(`encoder_layers.${i}.self_attn`),
      ff: ff(`encoder_layers.${i}.ff`), norm1: norm(`encoder_layers.${i}.norm1`), norm2: norm(`encoder_layers.${i}.norm2`) }));
    this.decoderLayers = [...Array(config.n_decoder_layers).keys()].map((i) => ({ self: attn(`decoder_layers.${i}.self_attn`),
      cross: attn(`decoder_layers.${i}.cross_attn`), ff: ff(`decoder_layers.${i}.ff`), norm1: norm(`decoder_layers.${i}.norm1`),
      norm2: norm(`decoder_layers.${i}.norm2`), norm3: norm(`decoder_layers.${i}.norm3`) }));
    // PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...), in float32 as the model's buffer
    this.pe = new Float32Array(config.max_len * D);
    for (let p = 0; p < config.max_len; p++) for (let i = 0; i < D; i += 2) {
      const f = Math.fround(Math.exp(i * (-Math.log(10000) / D)));
      this.pe[p * D + i] = Math.sin(Math.fround(p * f)); this.pe[p * D + i + 1] = Math.cos(Math.fround(p * f));
    }
  }

  /** ids at positions from `offset` -> (n, D) embeddings * sqrt(D) + positions. */
  embedding(ids, offset) {
    const D = this.D, x = new Float32Array(ids.length * D), scale = Math.sqrt(D);
    if (offset + ids.length > this.config.max_len) throw new Error(`sequence of ${offset + ids.length} positions is longer than max_len=${this.config.max_len}`);
    ids.forEach((id, r) => { for (let i = 0; i < D; i++) x[r * D + i] = this.embed[id * D + i] * scale + this.pe[(offset + r) * D + i]; });
    return x;
  }

  /** Attention of `rows` queries q (rows, D) over keys k, values v (n, D): the output (rows, D) before W_O and the
      weights (H, rows, n). `visible(r)`: how many keys row r may see (the causal mask; n without one). `keep`
      (H): each head's output scaled by it before W_O, 0 switching a head off (model/heads.HeadMask). */
  attend(q, k, v, rows, n, visible, keep) {
    const { D, H, dk } = this, out = new Float32Array(rows * D), weights = new Float32Array(H * rows * n);
    const scale = 1 / Math.sqrt(dk), row = new Float32Array(n);
    for (let h = 0; h < H; h++) for (let r = 0; r < rows; r++) {
      const m = visible ? visible(r) : n, qo = r * D + h * dk;
      for (let c = 0; c < n; c++) {
        if (c >= m) { row[c] = -Infinity; continue; }
        let s = 0;
        for (let i = 0; i < dk; i++) s += q[qo + i] * k[c * D + h * dk + i];
        row[c] = s * scale;
      }
      softmax(row, n);
      weights.set(row, (h * rows + r) * n);
      const kept = keep ? keep[h] : 1;
      for (let c = 0; c < m; c++) {
        const w = row[c];
        if (w && kept) for (let i = 0; i < dk; i++) out[qo + i] += w * v[c * D + h * dk + i];
      }
      if (kept !== 1) for (let i = 0; i < dk; i++) out[qo + i] *= kept;
    }
    return { out, weights };
  }

  /** Each head's scale of one attention (H) under the model's head mask (`heads`: {encoder, decoder, cross}, each
      one row of H a layer, as model/heads.HeadMask; null keeps every head). */
  kept(kind, layer) {
    return this.heads ? this.heads[kind][layer] : null;
  }

  feedForward(x, rows, f) {
    const hidden = linear(x, rows, f.W1, f.b1, this.D, this.F);
    for (let i = 0; i < hidden.length; i++) if (hidden[i] < 0) hidden[i] = 0;
    return linear(hidden, rows, f.W2, f.b2, this.F, this.D);
  }

  /** Source ids (ending in EOS) -> the memory (S, D), every layer's weights (H, S, S), and each decoder layer's
      cross-attention keys and values of the memory. `read(name, value)` sees q/k/v/out of each layer. */
  encode(ids, read) {
    const { D } = this, S = ids.length, maps = [];
    let x = this.embedding(ids, 0);
    this.encoderLayers.forEach((L, i) => {
      const q = linear(x, S, L.self.W, L.self.b, D, D, 0), k = linear(x, S, L.self.W, L.self.b, D, D, D);
      const v = linear(x, S, L.self.W, L.self.b, D, D, 2 * D), a = this.attend(q, k, v, S, S, null, this.kept("encoder", i));
      const o = linear(a.out, S, L.self.Wo, L.self.bo, D, D);
      if (read) read(`encoder.${i}.self_attn`, { q, k, v, weights: a.weights, heads: a.out, out: o });
      x = addNorm(x, o, S, D, L.norm1.g, L.norm1.b);
      x = addNorm(x, this.feedForward(x, S, L.ff), S, D, L.norm2.g, L.norm2.b);
      maps.push(a.weights);
    });
    const cross = this.decoderLayers.map((L) => ({ k: linear(x, S, L.cross.W, L.cross.b, D, D, D),
      v: linear(x, S, L.cross.W, L.cross.b, D, D, 2 * D) }));
    return { memory: x, S, maps, cross };
  }

  /** An empty key/value cache of one decoder row for `capacity` steps. */
  cache(capacity) {
    return { t: 0, layers: this.decoderLayers.map(() => ({ k: new Float32Array(capacity * this.D), v: new Float32Array(capacity * this.D) })) };
  }

  /** A copy of a cache (a beam that splits). */
  copyCache(c) {
    return { t: c.t, layers: c.layers.map((l) => ({ k: l.k.slice(), v: l.v.slice() })) };
  }

  /** One decoder step of one row: `token` read at position cache.t -> logits (V), the state before the output
      layer (D), and this step's attention rows: self (layer)(H, t+1) and cross (layer)(H, S). `read(name, value)`
      sees each sublayer's state (the logit lens) and each attention's q/k/v. */
  step(enc, cache, token, read) {
    const { D } = this, t = cache.t, selfRows = [], crossRows = [];
    let x = this.embedding([token], t);
    if (read) read("decoder.embed", x.slice());
    this.decoderLayers.forEach((L, i) => {
      const c = cache.layers[i], qkv = linear(x, 1, L.self.W, L.self.b, D, 3 * D, 0); // q, k, v in one product
      const q = qkv.subarray(0, D);
      c.k.set(qkv.subarray(D, 2 * D), t * D);
      c.v.set(qkv.subarray(2 * D), t * D);
      const a = this.attend(q, c.k, c.v, 1, t + 1, null, this.kept("decoder", i));
      const o = linear(a.out, 1, L.self.Wo, L.self.bo, D, D);
      if (read) read(`decoder.${i}.self_attn`, { q, k: c.k, v: c.v, weights: a.weights, heads: a.out, out: o });
      x = addNorm(x, o, 1, D, L.norm1.g, L.norm1.b);
      if (read) read(`decoder.${i}.self_attn.resid`, x.slice());
      const qc = linear(x, 1, L.cross.W, L.cross.b, D, D, 0), m = enc.cross[i];
      const b = this.attend(qc, m.k, m.v, 1, enc.S, null, this.kept("cross", i));
      const oc = linear(b.out, 1, L.cross.Wo, L.cross.bo, D, D);
      if (read) read(`decoder.${i}.cross_attn`, { q: qc, k: m.k, v: m.v, weights: b.weights, heads: b.out, out: oc });
      x = addNorm(x, oc, 1, D, L.norm2.g, L.norm2.b);
      if (read) read(`decoder.${i}.cross_attn.resid`, x.slice());
      x = addNorm(x, this.feedForward(x, 1, L.ff), 1, D, L.norm3.g, L.norm3.b);
      if (read) read(`decoder.${i}.ff.resid`, x.slice());
      selfRows.push(a.weights); crossRows.push(b.weights);
    });
    cache.t = t + 1;
    return { logits: this.logits(x), state: x, selfRows, crossRows };
  }

  /** One decoder step of K rows at once (the beams of a search, each with its cache, all at the same step): the
      tokens read -> each row's logits (V) and attention rows, as K calls of step() give them, number for number. The
      products take all K rows in one call, so each weight is read once a step, not once a row. */
  stepMany(enc, caches, tokens) {
    const { D } = this, K = tokens.length, t = caches[0].t, rows = tokens.map(() => ({ self: [], cross: [] }));
    let x = new Float32Array(K * D);
    tokens.forEach((token, r) => x.set(this.embedding([token], t), r * D));
    const each = (a, r) => a.subarray(r * D, (r + 1) * D);
    this.decoderLayers.forEach((L, i) => {
      const qkv = linear(x, K, L.self.W, L.self.b, D, 3 * D, 0), heads = new Float32Array(K * D);
      caches.forEach((cache, r) => {
        const c = cache.layers[i], at = r * 3 * D;
        c.k.set(qkv.subarray(at + D, at + 2 * D), t * D); c.v.set(qkv.subarray(at + 2 * D, at + 3 * D), t * D);
        const a = this.attend(qkv.subarray(at, at + D), c.k, c.v, 1, t + 1, null, this.kept("decoder", i));
        heads.set(a.out, r * D); rows[r].self.push(a.weights);
      });
      x = addNorm(x, linear(heads, K, L.self.Wo, L.self.bo, D, D), K, D, L.norm1.g, L.norm1.b);
      const qc = linear(x, K, L.cross.W, L.cross.b, D, D, 0), m = enc.cross[i], mixed = new Float32Array(K * D);
      for (let r = 0; r < K; r++) {
        const b = this.attend(each(qc, r), m.k, m.v, 1, enc.S, null, this.kept("cross", i));
        mixed.set(b.out, r * D); rows[r].cross.push(b.weights);
      }
      x = addNorm(x, linear(mixed, K, L.cross.Wo, L.cross.bo, D, D), K, D, L.norm2.g, L.norm2.b);
      x = addNorm(x, this.feedForward(x, K, L.ff), K, D, L.norm3.g, L.norm3.b);
    });
    caches.forEach((cache) => { cache.t = t + 1; });
    const logits = linear(x, K, this.embed, null, D, this.V);
    return rows.map((row, r) => ({ logits: logits.subarray(r * this.V, (r + 1) * this.V), selfRows: row.self, crossRows: row.cross }));
  }

  /** The output layer (the shared embedding, no bias): state (D) -> logits (V). */
  logits(state) {
    return linear(state, 1, this.embed, null, this.D, this.V);
  }
}
export { softmax as softmaxInPlace };
