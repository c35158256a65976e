// The native search's C interface, called by compiled/native_search.py through ctypes (which lets go of the
// interpreter lock for the call). One call translates a batch: the encoder, then greedy or beam search.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <new>

#include "search.h"

using namespace native;

namespace {

// The tensors of al_model_new, in order: per encoder layer 12 (in_proj w b, out_proj w b, norm1 w b, ff1 w b,
// ff2 w b, norm2 w b), per decoder layer 18 (self in_proj w b, self out_proj w b, cross in_proj w b, cross
// out_proj w b, ff1 w b, ff2 w b, norm1 w b, norm2 w b, norm3 w b), then the embedding (V, D) and the
// positional table (max_len, D), which the model reads in place (the caller keeps them while it lives).
Norm norm_of(const float* w, const float* b, int D) { return {std::vector<float>(w, w + D), std::vector<float>(b, b + D)}; }

Model* make(const int* c, float eps, const float* const* t, int int8) {
  auto* m = new Model;
  m->vocab = c[0], m->d_model = c[1], m->heads = c[2], m->d_ff = c[3], m->max_len = c[4];
  m->pad = c[5], m->bos = c[6], m->eos = c[7], m->eps = eps;
  const int enc = c[8], dec = c[9], D = m->d_model, F = m->d_ff, V = m->vocab;
  const bool qe = int8 == 2;  // the encoder (and the memory's keys and values) in int8 too
  for (int l = 0; l < enc; ++l, t += 12) {
    EncoderLayer e;
    e.in_proj = pack(t[0], t[1], 3 * D, D, qe);
    e.out_proj = pack(t[2], t[3], D, D, qe);
    e.norm1 = norm_of(t[4], t[5], D);
    e.ff1 = pack(t[6], t[7], F, D, qe);
    e.ff2 = pack(t[8], t[9], D, F, qe);
    e.norm2 = norm_of(t[10], t[11], D);
    m->encoder.push_back(std::move(e));
  }
  const bool q = int8 != 0;
  for (int l = 0; l < dec; ++l, t += 18) {
    DecoderLayer d;
    d.self_in = pack(t[0], t[1], 3 * D, D, q);
    d.self_out = pack(t[2], t[3], D, D, q);
    d.cross_q = pack(t[4], t[5], D, D, q);
    d.cross_kv = pack(t[4] + size_t(D) * D, t[5] + D, 2 * D, D, qe);
    d.cross_out = pack(t[6], t[7], D, D, q);
    d.ff1 = pack(t[8], t[9], F, D, q);
    d.ff2 = pack(t[10], t[11], D, F, q);
    d.norm1 = norm_of(t[12], t[13], D);
    d.norm2 = norm_of(t[14], t[15], D);
    d.norm3 = norm_of(t[16], t[17], D);
    m->decoder.push_back(std::move(d));
  }
  m->embed = t[0];  // read in place: the caller keeps them alive as long as the model
  m->pe = t[1];
  m->vocab_padded = (V + F32_BLOCK - 1) / F32_BLOCK * F32_BLOCK;
  std::vector<float> table(size_t(m->vocab_padded) * D, 0.0f);
  std::copy(m->embed, m->embed + size_t(V) * D, table.begin());
  m->lm_head = pack(table.data(), nullptr, m->vocab_padded, D, q);
  if (!q) {
    m->lm_screen = pack(table.data(), nullptr, m->vocab_padded, D, true);
    for (int c = 0; c < V; ++c) {
      const float scale = m->lm_screen.scale[c];
      float l1 = 0;
      for (int k = 0; k < D; ++k) l1 += std::fabs(std::nearbyint(table[size_t(c) * D + k] / scale)) * scale;
      m->screen_half_scale.push_back(scale / 2);
      m->screen_half_l1.push_back(l1 / 2);
    }
  }
  return m;
}

}  // namespace

extern "C" {

// 1 where this CPU runs the kernels (AVX2 and FMA).
int al_supported() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0; }

// config: vocab, d_model, heads, d_ff, max_len, pad, bos, eos, encoder layers, decoder layers. int8: 0 every
// product fp32, 1 the decoder's int8, 2 every product int8.
void* al_model_new(const int* config, float eps, const float* const* tensors, int int8) {
  try {
    return make(config, eps, tensors, int8);
  } catch (...) {
    return nullptr;
  }
}

void al_model_free(void* model) { delete static_cast<Model*>(model); }

constexpr int MAX_BEAMS = 64;  // the most beams one search keeps (compiled/native_search.py's MAX_BEAMS)

// Translates B sentences packed end to end (ids, lengths (B,)) into out (B, max_new_tokens), right-padded
// with pad; every output starts with the prefix_length ids of `prefix`. Returns 0, -1 for an id, a length or an option out of range, -2 when memory runs out.
int al_translate(void* model, const int* ids, const int* lengths, int B, int num_beams, float length_penalty,
                 int max_new_tokens, int min_new_tokens, int no_repeat_ngram, const int* prefix, int prefix_length,
                 int* out) {
  // What compiled/native_search.py's checked_call refuses, refused here too for a caller that skips it.
  if (model == nullptr || ids == nullptr || lengths == nullptr || out == nullptr || (prefix_length > 0 && prefix == nullptr))
    return -1;
  const Model& M = *static_cast<Model*>(model);
  if (B < 1 || num_beams < 1 || num_beams > MAX_BEAMS || 2 * num_beams > M.vocab || max_new_tokens < 1 ||
      max_new_tokens > M.max_len || prefix_length < 0 || prefix_length > max_new_tokens || min_new_tokens < 0 ||
      min_new_tokens > max_new_tokens || no_repeat_ngram < 0 || no_repeat_ngram > max_new_tokens ||
      !std::isfinite(length_penalty))
    return -1;
  for (int i = 0; i < prefix_length; ++i)  // an ordinary token: never padding, BOS or EOS
    if (prefix[i] < 0 || prefix[i] >= M.vocab || prefix[i] == M.pad || prefix[i] == M.bos || prefix[i] == M.eos) return -1;
  long total = 0;
  for (int b = 0; b < B; ++b) {
    if (lengths[b] < 1 || lengths[b] > M.max_len) return -1;
    total += lengths[b];
  }
  for (long i = 0; i < total; ++i)  // the sentences end to end: padding has no place in them
    if (ids[i] < 0 || ids[i] >= M.vocab || ids[i] == M.pad) return -1;
  try {
    Scratch s;
    Options o{num_beams, max_new_tokens, min_new_tokens, no_repeat_ngram, length_penalty,
              std::vector<int>(prefix, prefix + prefix_length)};
    Memory mem = encode(M, ids, lengths, B, s);
    auto result = num_beams == 1 ? greedy(M, mem, B, o, s) : beam(M, mem, B, o, s);
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < max_new_tokens; ++j) out[size_t(b) * max_new_tokens + j] = j < int(result[b].size()) ? result[b][j] : M.pad;
    return 0;
  } catch (const std::bad_alloc&) {
    return -2;
  }
}

// One product alone, for bench/int8_shapes.py: W (out, in) packed in fp32 or int8, then y (rows, out) = x W^T
// computed `repeats` times; returns the median of the calls' times in microseconds (packing not counted).
double al_bench_linear(const float* w, int out, int in, const float* x, int rows, int int8, int repeats, float* y) {
  if (out % F32_BLOCK || in % 8 || rows < 1 || repeats < 1) return -1;
  Linear L = pack(w, nullptr, out, in, int8 != 0);
  Scratch s;
  std::vector<double> times;
  for (int i = 0; i <= repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    linear(L, x, rows, y, s);
    if (i > 0) times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // extern "C"
