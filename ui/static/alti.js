// @ts-check
// twin of: lens/contributions.py (tests/test_site_views.py)
/* Attention Lens, who wrote each word, in the page: lens/contributions.py's ALTI+ (Ferrando et al. 2022) read off
   the page's own teacher-forced pass (taps.js), in /contributions' fields.

   Every attention block (attention, residual and LayerNorm) writes its output y_i as a sum of one part per input
   token j, T_i(x_j) = LN_i(sum_h alpha_hij W_O^h v_hj [+ x_i, the residual]), the LayerNorm linearised at its
   input. Token j's share of y_i is max(0, |y_i|_1 - |y_i - T_i(x_j)|_1), normalised over j. The encoder's shares
   are multiplied over its layers; each English position carries a composition over (German, English) that
   decoder self-attention mixes and cross-attention mixes the encoder's rolled-out German into. The feed-forward
   sublayers are left out of the mixing, as in ALTI.

   Shape legend: L rows of a block, M its columns, S German pieces, T English steps, H heads, D model width. */

/** A (rows, cols) matrix product of row-major arrays: a (n, k) b (k, m) -> (n, m). */
function matmul(a, b, n, k, m) {
  const out = new Float64Array(n * m);
  for (let i = 0; i < n; i++) for (let j = 0; j < k; j++) {
    const x = a[i * k + j];
    if (x) for (let c = 0; c < m; c++) out[i * m + c] += x * b[j * m + c];
  }
  return out;
}

/** One block's parts (L, M', D; cross-attention M' = M + 1, the residual last) and its output (L, D), Post-LN:
    x the stream before it, weights (H, L, M) and v (H, M, dk) from the taps, p its projections, norm its LayerNorm. */
function partsOfBlock(model, x, L, weights, v, M, p, norm, cross) {
  const { D, H, dk } = model, width = cross ? M + 1 : M, parts = new Float64Array(L * width * D);
  const vo = new Float64Array(H * M * D); // v_hm W_O^h: each head's value as written into the stream
  for (let h = 0; h < H; h++) for (let m = 0; m < M; m++) for (let f = 0; f < D; f++) {
    let s = 0;
    for (let i = 0; i < dk; i++) s += v[(h * M + m) * dk + i] * p.Wo[f * D + h * dk + i];
    vo[(h * M + m) * D + f] = s;
  }
  for (let l = 0; l < L; l++) for (let m = 0; m < M; m++) {
    const at = (l * width + m) * D;
    for (let h = 0; h < H; h++) {
      const w = weights[(h * L + l) * M + m];
      if (w) for (let f = 0; f < D; f++) parts[at + f] += w * vo[(h * M + m) * D + f];
    }
  }
  for (let l = 0; l < L; l++) { // the residual: the row's own token (self-attention), or a part of its own
    const at = (l * width + (cross ? M : l)) * D;
    for (let f = 0; f < D; f++) parts[at + f] += x[l * D + f];
  }
  const y = new Float64Array(L * D);
  for (let l = 0; l < L; l++) {
    const before = new Float64Array(D);
    for (let m = 0; m < width; m++) for (let f = 0; f < D; f++) before[f] += parts[(l * width + m) * D + f];
    for (let f = 0; f < D; f++) before[f] += p.bo[f];
    let mean = 0, variance = 0;
    for (const b of before) mean += b / D;
    for (const b of before) variance += (b - mean) ** 2 / D;
    const scale = 1 / Math.sqrt(variance + 1e-5);
    for (let f = 0; f < D; f++) y[l * D + f] = (before[f] - mean) * scale * norm.g[f] + norm.b[f];
    for (let m = 0; m < width; m++) { // each part through the LayerNorm held at this row's mean and scale
      const at = (l * width + m) * D;
      let pm = 0;
      for (let f = 0; f < D; f++) pm += parts[at + f] / D;
      for (let f = 0; f < D; f++) parts[at + f] = (parts[at + f] - pm) * scale * norm.g[f];
    }
  }
  return { y, parts, width };
}

/** ALTI's shares (L, width): how much closer each part brings one to the row's output, normalised. */
function sharesOf({ y, parts, width }, L, D) {
  const shares = new Float64Array(L * width);
  for (let l = 0; l < L; l++) {
    let norm = 0, total = 0;
    for (let f = 0; f < D; f++) norm += Math.abs(y[l * D + f]);
    for (let m = 0; m < width; m++) {
      let away = 0;
      for (let f = 0; f < D; f++) away += Math.abs(y[l * D + f] - parts[(l * width + m) * D + f]);
      shares[l * width + m] = Math.max(0, norm - away);
      total += shares[l * width + m];
    }
    for (let m = 0; m < width; m++) shares[l * width + m] /= Math.max(total, 1e-12);
  }
  return shares;
}

const tap = (taps, name) => taps.get(name).data;

/** The encoder's rolled-out shares (S, S), German onto German, from the pass's taps. */
function encoderRollout(model, taps, S) {
  let rollout = new Float64Array(S * S);
  for (let i = 0; i < S; i++) rollout[i * S + i] = 1;
  model.encoderLayers.forEach((layer, i) => {
    const x = tap(taps, i ? `encoder.${i - 1}.ff.resid` : "encoder.embed"), a = `encoder.${i}.self_attn`;
    const block = partsOfBlock(model, x, S, tap(taps, `${a}.weights`), tap(taps, `${a}.v`), S, layer.self, layer.norm1, false);
    rollout = matmul(sharesOf(block, S, model.D), rollout, S, S, S);
  });
  return rollout;
}

/** The compositions of the T English steps over (S German, T English) pieces, the German share after each decoder
    layer, the encoder's rollout and the cross-attention maps, from one pass's taps (taps.js's tapPass). */
export function decompose(model, taps, S, T) {
  const rollout = encoderRollout(model, taps, S), D = model.D, W = S + T;
  let composition = new Float64Array(T * W);
  for (let i = 0; i < T; i++) composition[i * W + S + i] = 1;
  const byLayer = [], maps = [];
  model.decoderLayers.forEach((layer, i) => {
    const self = `decoder.${i}.self_attn`, cross = `decoder.${i}.cross_attn`;
    const x = tap(taps, i ? `decoder.${i - 1}.ff.resid` : "decoder.embed");
    const own = partsOfBlock(model, x, T, tap(taps, `${self}.weights`), tap(taps, `${self}.v`), T, layer.self, layer.norm1, false);
    composition = matmul(sharesOf(own, T, D), composition, T, T, W);
    const weights = tap(taps, `${cross}.weights`);
    const mixed = partsOfBlock(model, tap(taps, `${self}.resid`), T, weights, tap(taps, `${cross}.v`), S, layer.cross, layer.norm2, true);
    const shares = sharesOf(mixed, T, D), german = matmul(shares.filter((_, j) => j % (S + 1) < S), rollout, T, S, S);
    const next = new Float64Array(T * W);
    for (let r = 0; r < T; r++) for (let c = 0; c < W; c++) {
      next[r * W + c] = shares[r * (S + 1) + S] * composition[r * W + c] + (c < S ? german[r * S + c] : 0);
    }
    composition = next;
    byLayer.push([...Array(T).keys()].map((r) => composition.subarray(r * W, r * W + S).reduce((a, b) => a + b, 0)));
    maps.push(weights);
  });
  return { composition, byLayer, rollout, maps };
}

const round4 = (x) => Math.round(x * 1e4) / 1e4;
const rows = (a, n, m, from = 0, width = m) => [...Array(n).keys()].map((r) => Array.from(a.subarray(r * width + from, r * width + from + m), round4));

/** /contributions for the pass over source `ids`, decoder `input` and output `out` (lens/contributions.py's fields). */
export function contributions(model, bpe, taps, ids, input, out) {
  const S = ids.length, T = input.length, H = model.H, { composition, byLayer, rollout, maps } = decompose(model, taps, S, T);
  const cross = new Float64Array(T * S); // the cross-attention map, mean of layers and heads
  for (const w of maps) for (let h = 0; h < H; h++) for (let i = 0; i < T * S; i++) cross[i] += w[h * T * S + i] / (maps.length * H);
  let overlap = 0, same = 0;
  for (let r = 0; r < T; r++) {
    const row = composition.subarray(r * (S + T), r * (S + T) + S), total = Math.max(row.reduce((a, b) => a + b, 0), 1e-12);
    let top = 0, mapTop = 0;
    for (let c = 0; c < S; c++) {
      overlap += Math.min(row[c] / total, cross[r * S + c]) / T;
      if (row[c] > row[top]) top = c;
      if (cross[r * S + c] > cross[r * S + mapTop]) mapTop = c;
    }
    same += top === mapTop ? 1 / T : 0;
  }
  const source = rows(composition, T, S, 0, S + T);
  return {
    source_tokens: bpe.labels(ids), target_tokens: bpe.labels(out), input_tokens: bpe.labels(input), source,
    target: rows(composition, T, T, S, S + T), source_share: source.map((_, r) => round4(composition.subarray(r * (S + T), r * (S + T) + S).reduce((a, b) => a + b, 0))),
    source_share_by_layer: byLayer.map((l) => l.map(round4)), encoder: rows(rollout, S, S), cross_attention: rows(cross, T, S),
    agreement: round4(overlap), same_top: round4(same),
  };
}
