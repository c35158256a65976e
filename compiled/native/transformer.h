// The Transformer of model/ for inference only: the encoder over whole sentences, the decoder one token a step.
//
// Post-LN layers (x = LayerNorm(x + sublayer(x)), the paper), as model/layers.py. The encoder packs the
// sentences of a batch one after another, without padding: a product runs over all their positions at
// once, attention within each sentence. The decoder's self-attention keys and values are written once a
// step into that step's block and never moved: a row finds its own earlier positions through its
// `ancestry` (the row it came from at every earlier step), so reordering beams copies a few integers, not
// the cache (see search.h).
#pragma once

#include <cmath>
#include <vector>

#include "kernels.h"

namespace native {

struct Norm {
  std::vector<float> weight, bias;
};

struct EncoderLayer {
  Linear in_proj, out_proj, ff1, ff2;
  Norm norm1, norm2;
};

struct DecoderLayer {
  Linear self_in, self_out, cross_q, cross_kv, cross_out, ff1, ff2;
  Norm norm1, norm2, norm3;
};

struct Model {
  int vocab = 0, vocab_padded = 0, d_model = 0, heads = 0, d_ff = 0, max_len = 0, pad = 0, bos = 1, eos = 2;
  float eps = 1e-5f;
  const float* embed = nullptr;  // (V, D), the tied table (fp32 always): the caller's, read in place
  const float* pe = nullptr;     // (max_len, D) sinusoids, the caller's
  std::vector<EncoderLayer> encoder;
  std::vector<DecoderLayer> decoder;
  Linear lm_head;            // (V', D): the same table, packed for the output layer, V' = V rounded up to 16
                             // (the rows past V are zeros, their logits -inf)
  Linear lm_screen;          // fp32 models: the table in int8 too, for greedy search's exact argmax (search.h)
  std::vector<float> screen_half_scale, screen_half_l1;  // per row: its scale / 2, and sum_k |w^_k| / 2
  int d_k() const { return d_model / heads; }
};

inline void layer_norm(float* x, int rows, int D, const Norm& n, float eps) {
  for (int r = 0; r < rows; ++r) {
    float* xr = x + size_t(r) * D;
    double mean = 0;
    for (int j = 0; j < D; ++j) mean += xr[j];
    mean /= D;
    double var = 0;
    for (int j = 0; j < D; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    var /= D;
    const float inv = float(1.0 / std::sqrt(var + eps)), m = float(mean);
    for (int j = 0; j < D; ++j) xr[j] = (xr[j] - m) * inv * n.weight[j] + n.bias[j];
  }
}

// x = LayerNorm(x + y), row by row.
inline void add_norm(float* x, const float* y, int rows, int D, const Norm& n, float eps) {
  for (size_t i = 0; i < size_t(rows) * D; ++i) x[i] += y[i];
  layer_norm(x, rows, D, n, eps);
}

inline float dot(const float* a, const float* b, int n) {
  __m256 s = _mm256_setzero_ps();
  for (int j = 0; j < n; j += 8) s = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), s);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// out (d_k,) = softmax(q . k_m / sqrt(d_k)) v over M keys and values at keys[m] + offset, values[m] + offset.
inline void attend(const float* q, const float* const* keys, const float* const* values, int M, int d_k, float* out,
                   std::vector<float>& w, int offset = 0) {
  w.resize(M);
  const float scale = 1.0f / std::sqrt(float(d_k));
  float mx = -INFINITY;
  for (int m = 0; m < M; ++m) mx = std::max(mx, w[m] = dot(q, keys[m] + offset, d_k) * scale);
  float sum = 0;
  for (int m = 0; m < M; ++m) sum += (w[m] = std::exp(w[m] - mx));
  for (int j = 0; j < d_k; ++j) out[j] = 0;
  for (int m = 0; m < M; ++m) {
    const float p = w[m] / sum;
    const __m256 vp = _mm256_set1_ps(p);
    for (int j = 0; j < d_k; j += 8)
      _mm256_storeu_ps(out + j, _mm256_fmadd_ps(vp, _mm256_loadu_ps(values[m] + offset + j), _mm256_loadu_ps(out + j)));
  }
}

// x (rows, D) = embed[ids] * sqrt(D) + pe[positions].
inline void embed(const Model& M, const int* ids, const int* positions, int rows, float* x) {
  const int D = M.d_model;
  const float s = std::sqrt(float(D));
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < D; ++j)
      x[size_t(r) * D + j] = M.embed[size_t(ids[r]) * D + j] * s + M.pe[size_t(positions[r]) * D + j];
}

// x (rows, D) -> ReLU(x W1 + b1) W2 + b2 into y.
inline void feed_forward(const Linear& ff1, const Linear& ff2, const float* x, int rows, float* y, std::vector<float>& hidden,
                         Scratch& s) {
  hidden.resize(size_t(rows) * ff1.out);
  linear(ff1, x, rows, hidden.data(), s);
  for (float& h : hidden) h = h > 0 ? h : 0;
  linear(ff2, hidden.data(), rows, y, s);
}

// What the decoder reads of the encoded batch: every layer's cross-attention keys and values (P, D), P the
// positions of all sentences, and where each sentence's positions start.
struct Memory {
  std::vector<std::vector<float>> keys, values;  // per decoder layer
  std::vector<int> start, length;                // per sentence
};

// The encoder over sentences packed end to end: ids (P,), lengths (B,) -> the decoder's Memory.
inline Memory encode(const Model& M, const int* ids, const int* lengths, int B, Scratch& s) {
  const int D = M.d_model, H = M.heads, dk = M.d_k();
  Memory mem;
  int P = 0;
  std::vector<int> positions;
  for (int b = 0; b < B; ++b) {
    mem.start.push_back(P);
    mem.length.push_back(lengths[b]);
    for (int i = 0; i < lengths[b]; ++i) positions.push_back(i);
    P += lengths[b];
  }
  std::vector<float> x(size_t(P) * D), qkv(size_t(P) * 3 * D), heads(size_t(P) * D), y(size_t(P) * D), hidden, w;
  embed(M, ids, positions.data(), P, x.data());
  std::vector<const float*> kp, vp;
  for (const EncoderLayer& layer : M.encoder) {
    linear(layer.in_proj, x.data(), P, qkv.data(), s);
    for (int b = 0; b < B; ++b) {
      const int st = mem.start[b], S = mem.length[b];
      kp.resize(S), vp.resize(S);
      for (int h = 0; h < H; ++h) {
        for (int m = 0; m < S; ++m) {
          kp[m] = qkv.data() + size_t(st + m) * 3 * D + D + h * dk;
          vp[m] = qkv.data() + size_t(st + m) * 3 * D + 2 * D + h * dk;
        }
        for (int i = 0; i < S; ++i)
          attend(qkv.data() + size_t(st + i) * 3 * D + h * dk, kp.data(), vp.data(), S, dk,
                 heads.data() + size_t(st + i) * D + h * dk, w);
      }
    }
    linear(layer.out_proj, heads.data(), P, y.data(), s);
    add_norm(x.data(), y.data(), P, D, layer.norm1, M.eps);
    feed_forward(layer.ff1, layer.ff2, x.data(), P, y.data(), hidden, s);
    add_norm(x.data(), y.data(), P, D, layer.norm2, M.eps);
  }
  std::vector<float> kv(size_t(P) * 2 * D);
  for (const DecoderLayer& layer : M.decoder) {
    linear(layer.cross_kv, x.data(), P, kv.data(), s);
    std::vector<float> k(size_t(P) * D), v(size_t(P) * D);
    for (int p = 0; p < P; ++p) {
      std::copy(kv.begin() + size_t(p) * 2 * D, kv.begin() + size_t(p) * 2 * D + D, k.begin() + size_t(p) * D);
      std::copy(kv.begin() + size_t(p) * 2 * D + D, kv.begin() + size_t(p + 1) * 2 * D, v.begin() + size_t(p) * D);
    }
    mem.keys.push_back(std::move(k));
    mem.values.push_back(std::move(v));
  }
  return mem;
}

// The self-attention keys and values written at one step by each of that step's rows: (rows, D) per layer.
struct StepCache {
  std::vector<std::vector<float>> keys, values;
};

// The decoder rows of one step: which sentence each row translates, and the row it came from at every
// earlier step (ancestry[r][t'] indexes the rows of step t').
struct Rows {
  std::vector<int> sentence;
  std::vector<std::vector<int>> ancestry;
  int count() const { return int(sentence.size()); }
};

// One decoder step: the newest token of every row (at position t) -> the decoder's output x (rows, D), before the
// output layer. The step's keys and values are appended to `cache` (cache[t] afterwards).
inline void decode_step(const Model& M, const Memory& mem, const Rows& rows, const int* tokens, int t,
                        std::vector<StepCache>& cache, std::vector<float>& x, Scratch& s) {
  const int D = M.d_model, H = M.heads, dk = M.d_k(), N = rows.count();
  x.resize(size_t(N) * D);
  std::vector<float> qkv(size_t(N) * 3 * D), heads(size_t(N) * D), y(size_t(N) * D), hidden, w;
  std::vector<int> positions(N, t);
  embed(M, tokens, positions.data(), N, x.data());
  cache.emplace_back();
  StepCache& now = cache.back();
  std::vector<const float*> kp, vp;
  for (size_t l = 0; l < M.decoder.size(); ++l) {
    const DecoderLayer& layer = M.decoder[l];
    linear(layer.self_in, x.data(), N, qkv.data(), s);
    now.keys.emplace_back(size_t(N) * D);
    now.values.emplace_back(size_t(N) * D);
    for (int r = 0; r < N; ++r) {
      std::copy_n(qkv.data() + size_t(r) * 3 * D + D, D, now.keys[l].data() + size_t(r) * D);
      std::copy_n(qkv.data() + size_t(r) * 3 * D + 2 * D, D, now.values[l].data() + size_t(r) * D);
    }
    kp.resize(t + 1), vp.resize(t + 1);
    for (int r = 0; r < N; ++r) {
      for (int p = 0; p <= t; ++p) {  // the row's own keys and values at every position, found once for all heads
        const int from = p < t ? rows.ancestry[r][p] : r;
        kp[p] = cache[p].keys[l].data() + size_t(from) * D;
        vp[p] = cache[p].values[l].data() + size_t(from) * D;
      }
      for (int h = 0; h < H; ++h)
        attend(qkv.data() + size_t(r) * 3 * D + h * dk, kp.data(), vp.data(), t + 1, dk, heads.data() + size_t(r) * D + h * dk, w,
               h * dk);
    }
    linear(layer.self_out, heads.data(), N, y.data(), s);
    add_norm(x.data(), y.data(), N, D, layer.norm1, M.eps);
    linear(layer.cross_q, x.data(), N, qkv.data(), s);  // (N, D): the queries
    for (int r = 0; r < N; ++r) {
      const int b = rows.sentence[r], st = mem.start[b], S = mem.length[b];
      kp.resize(S), vp.resize(S);
      for (int m = 0; m < S; ++m) {
        kp[m] = mem.keys[l].data() + size_t(st + m) * D;
        vp[m] = mem.values[l].data() + size_t(st + m) * D;
      }
      for (int h = 0; h < H; ++h)
        attend(qkv.data() + size_t(r) * D + h * dk, kp.data(), vp.data(), S, dk, heads.data() + size_t(r) * D + h * dk, w, h * dk);
    }
    linear(layer.cross_out, heads.data(), N, y.data(), s);
    add_norm(x.data(), y.data(), N, D, layer.norm2, M.eps);
    feed_forward(layer.ff1, layer.ff2, x.data(), N, y.data(), hidden, s);
    add_norm(x.data(), y.data(), N, D, layer.norm3, M.eps);
  }
}

// The output layer: x (N, D) -> logits (N, V'), -inf past V.
inline void output_layer(const Model& M, const float* x, int N, float* logits, Scratch& s) {
  linear(M.lm_head, x, N, logits, s);
  for (int r = 0; r < N; ++r)
    for (int j = M.vocab; j < M.vocab_padded; ++j) logits[size_t(r) * M.vocab_padded + j] = -INFINITY;
}

}  // namespace native
