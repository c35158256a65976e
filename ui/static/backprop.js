// @ts-check
/* Attention Lens, backpropagation written out by hand: the few operations a Transformer is made of, each with its
   forward rule and its backward rule, on a tape. A forward pass records every operation; backward() walks the tape
   in reverse and hands each operation the gradient of the loss with respect to its output, from which it adds the
   gradients of its inputs (the chain rule). The copy lab trains with it (copytrain.js).

     const tape = new Tape();
     const y = tape.linear(x, W, b);          // y = x Wᵀ + b, as nn.Linear
     const loss = tape.crossEntropy(logits, targets, 0.1, n);
     tape.backward(loss);                      // W.grad, b.grad, ... now hold dloss/dW, dloss/db, ...

   A Node is {v, g, shape}: its values and, once backward() ran, the gradient of the loss with respect to them.
   Shapes are [rows, cols], row-major Float64Arrays (double precision, as the PyTorch twin lab/model.py computes, so that
   tests/test_lab_parity.py can hold the two to 1e-4); parameters keep their g across tapes (it adds up over a batch). */

/** @typedef {{v: Float64Array, g: Float64Array, shape: number[]}} Node */

/** A value the gradient flows into: a parameter (its g is kept) or an input. */
export function node(v, shape) {
  return { v, g: new Float64Array(v.length), shape };
}

export class Tape {
  constructor() {
    /** @type {(() => void)[]} the backward rule of every operation, in the order they ran */
    this.rules = [];
  }

  /** y (n, out) = x (n, in) Wᵀ + b: W (out, in), b (out) or null. dx = dy W, dW += dyᵀ x, db += Σ dy. */
  linear(x, W, b) {
    const [n, inDim] = x.shape, out = W.shape[0], y = node(new Float64Array(n * out), [n, out]);
    const xv = x.v, wv = W.v, yv = y.v, bv = b ? b.v : null; // the arrays at hand: the loops below are the hot ones
    for (let r = 0; r < n; r++) for (let o = 0; o < out; o++) {
      let s = bv ? bv[o] : 0;
      for (let i = 0, xi = r * inDim, wi = o * inDim; i < inDim; i++) s += xv[xi + i] * wv[wi + i];
      yv[r * out + o] = s;
    }
    this.rules.push(() => {
      const xg = x.g, wg = W.g, yg = y.g, bg = b ? b.g : null;
      for (let r = 0; r < n; r++) for (let o = 0; o < out; o++) {
        const d = yg[r * out + o];
        if (!d) continue;
        if (bg) bg[o] += d;
        for (let i = 0, xi = r * inDim, wi = o * inDim; i < inDim; i++) { xg[xi + i] += d * wv[wi + i]; wg[wi + i] += d * xv[xi + i]; }
      }
    });
    return y;
  }

  /** a + b, the same shape (the residual connection). */
  add(a, b) {
    const y = node(a.v.map((x, i) => x + b.v[i]), a.shape);
    this.rules.push(() => { for (let i = 0; i < y.g.length; i++) { a.g[i] += y.g[i]; b.g[i] += y.g[i]; } });
    return y;
  }

  /** max(0, x): the gradient passes where x was positive. */
  relu(x) {
    const y = node(x.v.map((v) => (v > 0 ? v : 0)), x.shape);
    this.rules.push(() => { for (let i = 0; i < y.g.length; i++) if (x.v[i] > 0) x.g[i] += y.g[i]; });
    return y;
  }

  /** Rows of E (V, D) for `ids`, times `scale`, plus positions: `pe` a fixed table (the sinusoids), a node (learned
      positions, which get gradients) or null (none). dE[id] += dy · scale, dpe[r] += dy. */
  embed(E, ids, scale, pe) {
    const D = E.shape[1], y = node(new Float64Array(ids.length * D), [ids.length, D]);
    const table = pe && "v" in pe ? pe.v : pe;
    ids.forEach((id, r) => { for (let i = 0; i < D; i++) y.v[r * D + i] = E.v[id * D + i] * scale + (table ? table[r * D + i] : 0); });
    this.rules.push(() => ids.forEach((id, r) => {
      for (let i = 0; i < D; i++) {
        E.g[id * D + i] += y.g[r * D + i] * scale;
        if (pe && "g" in pe) pe.g[r * D + i] += y.g[r * D + i];
      }
    }));
    return y;
  }

  /** The first n rows of x (the swapped cross-attention's queries: the memory cut to the decoder's length). */
  rows(x, n) {
    const D = x.shape[1], y = node(x.v.slice(0, n * D), [n, D]);
    this.rules.push(() => { for (let i = 0; i < n * D; i++) x.g[i] += y.g[i]; });
    return y;
  }

  /** LayerNorm of each row (eps 1e-5): y = x̂ g + b, x̂ = (x - mean) / σ. dx = (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)) / σ. */
  layerNorm(x, g, b) {
    const [n, D] = x.shape, y = node(new Float64Array(n * D), x.shape), xhat = new Float64Array(n * D), inv = new Float64Array(n);
    for (let r = 0; r < n; r++) {
      let mean = 0, variance = 0;
      for (let i = 0; i < D; i++) mean += x.v[r * D + i] / D;
      for (let i = 0; i < D; i++) variance += (x.v[r * D + i] - mean) ** 2 / D;
      inv[r] = 1 / Math.sqrt(variance + 1e-5);
      for (let i = 0; i < D; i++) { xhat[r * D + i] = (x.v[r * D + i] - mean) * inv[r]; y.v[r * D + i] = xhat[r * D + i] * g.v[i] + b.v[i]; }
    }
    this.rules.push(() => {
      for (let r = 0; r < n; r++) {
        let m1 = 0, m2 = 0;
        for (let i = 0; i < D; i++) {
          const dy = y.g[r * D + i], dxhat = dy * g.v[i];
          g.g[i] += dy * xhat[r * D + i]; b.g[i] += dy;
          m1 += dxhat / D; m2 += dxhat * xhat[r * D + i] / D;
        }
        for (let i = 0; i < D; i++) x.g[r * D + i] += (y.g[r * D + i] * g.v[i] - m1 - xhat[r * D + i] * m2) * inv[r];
      }
    });
    return y;
  }

  /** H heads of softmax(Q Kᵀ / √dk) V: q (L, D), k and v (M, D), the heads side by side; `causal` hides the columns
      after each row. Returns the output (L, D) and keeps the weights (H, L, M) on `.weights`. Backward, per head:
      dV = Wᵀ dO, dW = dO Vᵀ, dS = W ⊙ (dW - Σ_c dW ⊙ W), dQ = dS K / √dk, dK = dSᵀ Q / √dk.
      The lab's switches (lab/model.py): `scale` false leaves out ÷√dk; `view` true splits the heads as `view` alone
      does (the common bug): head h's row r is the numbers (h·L + r)·dk … of the row-major (L, D) block, not row r's
      columns h·dk …, so a "row" mixes pieces of several positions (and the output is put back the same way). */
  attention(q, k, v, H, causal, { scale: scaled = true, view = false } = {}) {
    const [L, D] = q.shape, M = k.shape[0], dk = D / H, scale = scaled ? 1 / Math.sqrt(dk) : 1;
    const at = view ? (h, r, rows) => (h * rows + r) * dk : (h, r) => r * D + h * dk; // where head h's row r starts
    const y = node(new Float64Array(L * D), [L, D]), w = new Float64Array(H * L * M);
    for (let h = 0; h < H; h++) for (let r = 0; r < L; r++) {
      const row = w.subarray((h * L + r) * M, (h * L + r + 1) * M), seen = causal ? r + 1 : M, qr = at(h, r, L);
      let top = -Infinity;
      for (let c = 0; c < seen; c++) {
        let s = 0;
        for (let i = 0, kc = at(h, c, M); i < dk; i++) s += q.v[qr + i] * k.v[kc + i];
        row[c] = s * scale; top = Math.max(top, row[c]);
      }
      let sum = 0;
      for (let c = 0; c < seen; c++) { row[c] = Math.exp(row[c] - top); sum += row[c]; }
      for (let c = 0; c < seen; c++) {
        row[c] /= sum;
        for (let i = 0, vc = at(h, c, M); i < dk; i++) y.v[qr + i] += row[c] * v.v[vc + i];
      }
    }
    this.rules.push(() => {
      const dw = new Float64Array(M);
      for (let h = 0; h < H; h++) for (let r = 0; r < L; r++) {
        const row = w.subarray((h * L + r) * M, (h * L + r + 1) * M), seen = causal ? r + 1 : M, qr = at(h, r, L);
        let dot = 0;
        for (let c = 0; c < seen; c++) {
          let s = 0;
          for (let i = 0, vc = at(h, c, M); i < dk; i++) { const d = y.g[qr + i]; s += d * v.v[vc + i]; v.g[vc + i] += row[c] * d; }
          dw[c] = s; dot += s * row[c];
        }
        for (let c = 0; c < seen; c++) {
          const ds = row[c] * (dw[c] - dot) * scale;
          if (!ds) continue;
          for (let i = 0, kc = at(h, c, M); i < dk; i++) { q.g[qr + i] += ds * k.v[kc + i]; k.g[kc + i] += ds * q.v[qr + i]; }
        }
      }
    });
    return Object.assign(y, { weights: w });
  }

  /** Mean label-smoothed cross-entropy of logits (T, V) against `targets`, summed here and divided by `count` (the
      batch's pieces): loss = -(1 - ε) log p_target - ε mean_c log p_c. dlogits = (p - (1 - ε) onehot - ε / V) / count.
      Returns a 1-number node. */
  crossEntropy(logits, targets, smoothing, count) {
    const [T, V] = logits.shape, p = new Float64Array(T * V), y = node(new Float64Array(1), [1, 1]);
    for (let r = 0; r < T; r++) {
      const row = logits.v.subarray(r * V, (r + 1) * V), top = Math.max(...row);
      let sum = 0;
      for (let c = 0; c < V; c++) sum += Math.exp(row[c] - top);
      const lse = top + Math.log(sum);
      let mean = 0;
      for (let c = 0; c < V; c++) { p[r * V + c] = Math.exp(row[c] - lse); mean += (lse - row[c]) / V; }
      y.v[0] += ((1 - smoothing) * (lse - row[targets[r]]) + smoothing * mean) / count;
    }
    this.rules.push(() => {
      for (let r = 0; r < T; r++) for (let c = 0; c < V; c++) {
        logits.g[r * V + c] += y.g[0] * (p[r * V + c] - (c === targets[r] ? 1 - smoothing : 0) - smoothing / V) / count;
      }
    });
    return y;
  }

  /** Run every backward rule in reverse, from dloss/dloss = 1; the tape is spent. */
  backward(loss) {
    loss.g[0] = 1;
    for (let i = this.rules.length - 1; i >= 0; i--) this.rules[i]();
    this.rules = [];
  }
}
