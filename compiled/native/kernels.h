// The matrix products of the native search: y = x W^T + b, in fp32 or in int8 (AVX2 + FMA).
//
// A matrix is packed once, when the engine is made, so that a product reads it front to back:
//   fp32: blocks of 16 output rows, each (in, 16): one k gives two 8-float vectors;
//   int8: blocks of 8 output rows, each (in / 4, 8, 4): one 32-byte vector is 4 consecutive k of 8 rows.
// int8 follows CTranslate2's recipe: one scale per weight row (7-bit weights, |q| <= 63), and the
// activations quantised on the fly with one scale per row (8 bits, shifted by +128 to be unsigned), so that
// _mm256_maddubs_epi16 (u8 x s8 -> s16 pairs) never saturates: 255 * 63 * 2 < 32767. The shift is taken
// back with 128 * (the row sum of the weights), kept beside them.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace native {

constexpr int F32_BLOCK = 16;   // output rows of a packed fp32 block
constexpr int I8_BLOCK = 8;     // output rows of a packed int8 block
constexpr int I8_WEIGHT_MAX = 63;
constexpr int I8_ACT_MAX = 127;

struct Linear {
  int out = 0, in = 0;
  bool int8 = false;
  std::vector<float> packed;      // fp32: (out / 16, in, 16)
  std::vector<int8_t> qpacked;    // int8: (out / 8, in / 4, 8, 4)
  std::vector<float> scale;       // int8: one per output row
  std::vector<int32_t> shift;     // int8: 128 * sum_k q[row, k]
  std::vector<float> bias;        // (out,), zeros when the layer has none
};

// Packs W (out, in) row-major (with bias or nullptr) for the products below.
inline Linear pack(const float* w, const float* b, int out, int in, bool int8) {
  Linear L;
  L.out = out, L.in = in, L.int8 = int8;
  L.bias.assign(out, 0.0f);
  if (b) std::copy(b, b + out, L.bias.begin());
  if (!int8) {
    L.packed.resize(size_t(out) * in);
    for (int blk = 0; blk < out / F32_BLOCK; ++blk)
      for (int k = 0; k < in; ++k)
        for (int j = 0; j < F32_BLOCK; ++j)
          L.packed[(size_t(blk) * in + k) * F32_BLOCK + j] = w[size_t(blk * F32_BLOCK + j) * in + k];
    return L;
  }
  L.qpacked.resize(size_t(out) * in);
  L.scale.resize(out);
  L.shift.resize(out);
  std::vector<int8_t> q(size_t(out) * in);
  for (int r = 0; r < out; ++r) {
    float amax = 0.0f;
    for (int k = 0; k < in; ++k) amax = std::max(amax, std::fabs(w[size_t(r) * in + k]));
    float s = amax > 0 ? amax / I8_WEIGHT_MAX : 1.0f;
    int32_t sum = 0;
    for (int k = 0; k < in; ++k) {
      int v = int(std::nearbyint(w[size_t(r) * in + k] / s));
      v = std::max(-I8_WEIGHT_MAX, std::min(I8_WEIGHT_MAX, v));
      q[size_t(r) * in + k] = int8_t(v);
      sum += v;
    }
    L.scale[r] = s;
    L.shift[r] = 128 * sum;
  }
  for (int blk = 0; blk < out / I8_BLOCK; ++blk)
    for (int g = 0; g < in / 4; ++g)
      for (int j = 0; j < I8_BLOCK; ++j)
        for (int u = 0; u < 4; ++u)
          L.qpacked[((size_t(blk) * (in / 4) + g) * I8_BLOCK + j) * 4 + u] = q[size_t(blk * I8_BLOCK + j) * in + 4 * g + u];
  return L;
}

// fp32: R rows of x times C blocks of 16 output rows, 2 * R * C accumulators.
template <int R, int C>
inline void f32_tile(const Linear& L, const float* x, int ldx, float* y, int ldy, int blk) {
  __m256 acc[R][C][2];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c][0] = acc[r][c][1] = _mm256_setzero_ps();
  const float* w[C];
  for (int c = 0; c < C; ++c) w[c] = L.packed.data() + size_t(blk + c) * L.in * F32_BLOCK;
  for (int k = 0; k < L.in; ++k) {
    __m256 w0[C], w1[C];
    for (int c = 0; c < C; ++c) {
      w0[c] = _mm256_loadu_ps(w[c] + k * F32_BLOCK);
      w1[c] = _mm256_loadu_ps(w[c] + k * F32_BLOCK + 8);
    }
    for (int r = 0; r < R; ++r) {
      __m256 a = _mm256_broadcast_ss(x + size_t(r) * ldx + k);
      for (int c = 0; c < C; ++c) {
        acc[r][c][0] = _mm256_fmadd_ps(a, w0[c], acc[r][c][0]);
        acc[r][c][1] = _mm256_fmadd_ps(a, w1[c], acc[r][c][1]);
      }
    }
  }
  for (int c = 0; c < C; ++c) {
    const float* b = L.bias.data() + (blk + c) * F32_BLOCK;
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    for (int r = 0; r < R; ++r) {
      float* o = y + size_t(r) * ldy + (blk + c) * F32_BLOCK;
      _mm256_storeu_ps(o, _mm256_add_ps(acc[r][c][0], b0));
      _mm256_storeu_ps(o + 8, _mm256_add_ps(acc[r][c][1], b1));
    }
  }
}

template <int R, int C>
inline void f32_rows(const Linear& L, const float* x, int ldx, float* y, int ldy) {
  const int blocks = L.out / F32_BLOCK;
  int blk = 0;
  for (; blk + C <= blocks; blk += C) f32_tile<R, C>(L, x, ldx, y, ldy, blk);
  for (; blk < blocks; ++blk) f32_tile<R, 1>(L, x, ldx, y, ldy, blk);
}

// int8: R rows of quantised x (u8, their scales xs) times C blocks of 8 output rows, written to y as fp32:
// y = (sum - shift) * xs[r] * scale[c] + bias[c].
template <int R, int C>
inline void i8_tile(const Linear& L, const uint8_t* xq, const float* xs, float* y, int blk) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int ldx = L.in, ldy = L.out;
  __m256i acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_si256();
  const int groups = L.in / 4;
  const int8_t* w[C];
  for (int c = 0; c < C; ++c) w[c] = L.qpacked.data() + size_t(blk + c) * groups * 32;
  for (int g = 0; g < groups; ++g) {
    __m256i wv[C];
    for (int c = 0; c < C; ++c) wv[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[c] + size_t(g) * 32));
    for (int r = 0; r < R; ++r) {
      int32_t four;
      std::memcpy(&four, xq + size_t(r) * ldx + 4 * g, 4);
      __m256i a = _mm256_set1_epi32(four);
      for (int c = 0; c < C; ++c)
        acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(_mm256_maddubs_epi16(a, wv[c]), ones));
    }
  }
  for (int c = 0; c < C; ++c) {
    const int col = (blk + c) * I8_BLOCK;
    const __m256i shift = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(L.shift.data() + col));
    const __m256 scale = _mm256_loadu_ps(L.scale.data() + col), bias = _mm256_loadu_ps(L.bias.data() + col);
    for (int r = 0; r < R; ++r) {
      __m256 f = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc[r][c], shift));
      f = _mm256_fmadd_ps(_mm256_mul_ps(f, _mm256_set1_ps(xs[r])), scale, bias);
      _mm256_storeu_ps(y + size_t(r) * ldy + col, f);
    }
  }
}

template <int R, int C>
inline void i8_rows(const Linear& L, const uint8_t* xq, const float* xs, float* y) {
  const int blocks = L.out / I8_BLOCK;
  int blk = 0;
  for (; blk + C <= blocks; blk += C) i8_tile<R, C>(L, xq, xs, y, blk);
  for (; blk < blocks; ++blk) i8_tile<R, 1>(L, xq, xs, y, blk);
}

// Quantises `rows` rows of x (in,) to u8 = round(x / s) + 128 with s = max |x| / 127, one s a row.
inline void quantise_rows(const float* x, int rows, int in, uint8_t* xq, float* scales) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * in;
    __m256 m = _mm256_setzero_ps();
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int k = 0; k < in; k += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(xr + k)));
    float lanes[8];
    _mm256_storeu_ps(lanes, m);
    float amax = *std::max_element(lanes, lanes + 8);
    float s = amax > 0 ? amax / I8_ACT_MAX : 1.0f;
    scales[r] = s;
    const __m256 inv = _mm256_set1_ps(1.0f / s);
    const __m256i shift = _mm256_set1_epi32(128), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    auto q8 = [&](int k) {  // |x / s| <= 127, so x / s + 128 lies in [1, 255]: no clamping needed
      return _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xr + k), inv)), shift);
    };
    int k = 0;
    for (; k + 32 <= in; k += 32) {  // 32 values: int32 -> u16 -> u8, then the lanes put back in order
      __m256i lo = _mm256_packus_epi32(q8(k), q8(k + 8)), hi = _mm256_packus_epi32(q8(k + 16), q8(k + 24));
      __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(lo, hi), order);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(xq + size_t(r) * in + k), bytes);
    }
    for (; k < in; k += 8) {
      int32_t out[8];
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), q8(k));
      for (int j = 0; j < 8; ++j) xq[size_t(r) * in + k + j] = uint8_t(out[j]);
    }
  }
}

// Scratch space a product reuses (one per search).
struct Scratch {
  std::vector<uint8_t> xq;
  std::vector<float> xs;
};

// Rows are taken ROW_CHUNK at a time, and within a chunk every block of output rows meets all of the chunk's
// rows before the next block is read: a block of weights (16 KB to 64 KB) stays in the core's caches while it
// is used, and the matrix is read from memory once a chunk instead of once every few rows.
constexpr int ROW_CHUNK = 48;

template <int R, int C>
inline void f32_group(const Linear& L, const float* x, float* y, int blk) {
  f32_tile<R, C>(L, x, L.in, y, L.out, blk);
}

// fp32: the rows of a chunk in groups of 6 (the rest in one smaller group), one block at a time.
inline void f32_chunk(const Linear& L, const float* x, int rows, float* y, int blk) {
  int r = 0;
  for (; r + 6 <= rows; r += 6) f32_group<6, 1>(L, x + size_t(r) * L.in, y + size_t(r) * L.out, blk);
  const float* xr = x + size_t(r) * L.in;
  float* yr = y + size_t(r) * L.out;
  switch (rows - r) {
    case 1: f32_group<1, 1>(L, xr, yr, blk); break;
    case 2: f32_group<2, 1>(L, xr, yr, blk); break;
    case 3: f32_group<3, 1>(L, xr, yr, blk); break;
    case 4: f32_group<4, 1>(L, xr, yr, blk); break;
    case 5: f32_group<5, 1>(L, xr, yr, blk); break;
    default: break;
  }
}

inline void f32_linear(const Linear& L, const float* x, int rows, float* y) {
  if (rows <= 3) {  // a few rows: several blocks at once, for enough independent sums
    switch (rows) {
      case 1: f32_rows<1, 4>(L, x, L.in, y, L.out); return;
      case 2: f32_rows<2, 3>(L, x, L.in, y, L.out); return;
      default: f32_rows<3, 2>(L, x, L.in, y, L.out); return;
    }
  }
  for (int start = 0; start < rows; start += ROW_CHUNK) {
    const int n = std::min(ROW_CHUNK, rows - start);
    for (int blk = 0; blk < L.out / F32_BLOCK; ++blk)
      f32_chunk(L, x + size_t(start) * L.in, n, y + size_t(start) * L.out, blk);
  }
}

inline void i8_chunk(const Linear& L, const uint8_t* xq, const float* xs, int rows, float* y, int blk, int blocks) {
  int r = 0;
  if (blocks == 2) {
    for (; r + 4 <= rows; r += 4) i8_tile<4, 2>(L, xq + size_t(r) * L.in, xs + r, y + size_t(r) * L.out, blk);
  }
  for (; r < rows; ++r)
    for (int b = 0; b < blocks; ++b) i8_tile<1, 1>(L, xq + size_t(r) * L.in, xs + r, y + size_t(r) * L.out, blk + b);
}

inline void i8_linear(const Linear& L, const uint8_t* xq, const float* xs, int rows, float* y) {
  if (rows <= 3) {
    switch (rows) {
      case 1: i8_rows<1, 4>(L, xq, xs, y); return;
      case 2: i8_rows<2, 3>(L, xq, xs, y); return;
      default: i8_rows<3, 2>(L, xq, xs, y); return;
    }
  }
  const int blocks = L.out / I8_BLOCK;
  for (int start = 0; start < rows; start += ROW_CHUNK) {
    const int n = std::min(ROW_CHUNK, rows - start);
    for (int blk = 0; blk < blocks; blk += 2)
      i8_chunk(L, xq + size_t(start) * L.in, xs + start, n, y + size_t(start) * L.out, blk, std::min(2, blocks - blk));
  }
}

// y (rows, out) = x (rows, in) W^T + b.
inline void linear(const Linear& L, const float* x, int rows, float* y, Scratch& s) {
  if (!L.int8) {
    f32_linear(L, x, rows, y);
    return;
  }
  s.xq.resize(size_t(rows) * L.in);
  s.xs.resize(rows);
  quantise_rows(x, rows, L.in, s.xq.data(), s.xs.data());
  i8_linear(L, s.xq.data(), s.xs.data(), rows, y);
}

// e^x for 8 floats (Cephes' polynomial, relative error about 2e-7); -inf gives 0.
inline __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.3762626647949f), lo = _mm256_set1_ps(-88.3762626647949f);
  x = _mm256_max_ps(_mm256_min_ps(x, hi), lo);
  __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

// log sum_j e^{x_j} over n floats (n a multiple of 8), -inf entries left out.
inline float log_sum_exp(const float* x, int n) {
  __m256 m = _mm256_set1_ps(-INFINITY);
  for (int j = 0; j < n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + j));
  float lanes[8];
  _mm256_storeu_ps(lanes, m);
  float mx = *std::max_element(lanes, lanes + 8);
  if (!std::isfinite(mx)) return mx;
  const __m256 vm = _mm256_set1_ps(mx), floor = _mm256_set1_ps(-88.0f);
  __m256 sum = _mm256_setzero_ps();
  for (int j = 0; j < n; j += 8) {
    __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + j), vm);
    __m256 e = exp8(d);
    sum = _mm256_add_ps(sum, _mm256_and_ps(e, _mm256_cmp_ps(d, floor, _CMP_GE_OQ)));  // -inf (banned) adds 0
  }
  _mm256_storeu_ps(lanes, sum);
  double total = 0;
  for (float v : lanes) total += v;
  return mx + float(std::log(total));
}

}  // namespace native
