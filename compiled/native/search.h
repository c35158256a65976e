// Greedy and beam search in C++, the rules of generation/search.py and generation/bans.py step for step:
// padding and BOS never written, EOS not before min_new_tokens, no n-gram twice (no_repeat_ngram), beam scores
// sum(log p) / length ** length_penalty, a sentence done once it holds K finished hypotheses and its best live
// beam cannot beat the worst of them, live beams taken as they are when the steps run out.
//
// What makes it fast besides leaving the interpreter (CTranslate2's beam): finished sentences leave the batch
// at once; a sentence's beams share its cross-attention keys and values; the first step runs one row a
// sentence (all K beams are BOS then); reordering beams copies row indices, not the cache (transformer.h);
// each row's 2K best tokens are picked by one pass over its logits, and the 2K best of a sentence among them.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "transformer.h"

namespace native {

struct Options {
  int num_beams = 1, max_new_tokens = 64, min_new_tokens = 0, no_repeat_ngram = 0;
  float length_penalty = 1.0f;
  std::vector<int> prefix;  // forced first tokens of every output (no BOS): decoding is free after them
  bool forced(int t) const { return t < int(prefix.size()); }
};

// Sets to -inf what row `written` (the tokens after BOS) may not write next, at step t.
inline void ban(const Model& M, const Options& o, float* logits, int t, const std::vector<int>& written) {
  logits[M.pad] = -INFINITY;
  logits[M.bos] = -INFINITY;
  if (t < o.min_new_tokens) logits[M.eos] = -INFINITY;
  const int n = o.no_repeat_ngram, len = int(written.size());
  if (n <= 0 || len < n) return;
  for (int g = 0; g + n <= len; ++g) {
    bool seen = true;
    for (int i = 0; i < n - 1 && seen; ++i) seen = written[g + i] == written[len - (n - 1) + i];
    if (seen) logits[written[g + n - 1]] = -INFINITY;
  }
}

inline int arg_max(const float* x, int n) {
  int best = 0;
  for (int j = 1; j < n; ++j)
    if (x[j] > x[best]) best = j;
  return best;
}

// The k largest of x (n,), largest first (ties: the lower index first).
inline std::vector<std::pair<float, int>> top_k(const float* x, int n, int k) {
  std::vector<std::pair<float, int>> top;
  top.reserve(k + 1);
  float floor = -INFINITY;
  auto better = [](const std::pair<float, int>& a, const std::pair<float, int>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  for (int j = 0; j < n; j += 8) {
    if (int(top.size()) == k &&
        !_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + j), _mm256_set1_ps(floor), _CMP_GT_OQ)))
      continue;
    for (int i = j; i < j + 8; ++i) {
      if (int(top.size()) == k && !(x[i] > floor)) continue;
      std::pair<float, int> item{x[i], i};
      top.insert(std::upper_bound(top.begin(), top.end(), item, better), item);
      if (int(top.size()) > k) top.pop_back();
      if (int(top.size()) == k) floor = top.back().first;
    }
  }
  return top;
}

// Greedy search's next token in an fp32 model, read from the int8 copy of the output layer and made exact: the
// int8 logit of piece c is within err_c = (s_c / 2) |x|_1 + (s_x / 2) |w^_c|_1 of the fp32 one (s_c, s_x the
// weight row's and the activation row's scales), so the fp32 argmax is among the pieces whose int8 logit plus
// err_c reaches the best int8 logit minus its err; only those few are multiplied in fp32. Reads a quarter of
// the output layer's bytes, and gives the fp32 argmax.
inline int exact_arg_max(const Model& M, const Options& o, const float* x, int t, const std::vector<int>& written,
                         float* approx, float x_scale) {
  const int D = M.d_model, V = M.vocab;
  float l1 = 0;
  for (int k = 0; k < D; ++k) l1 += std::fabs(x[k]);
  ban(M, o, approx, t, written);
  const float margin = 1e-3f;
  std::vector<float> err(V);
  float best_lower = -INFINITY;
  for (int c = 0; c < V; ++c) {
    err[c] = M.screen_half_scale[c] * l1 + x_scale * M.screen_half_l1[c] + margin + 1e-6f * std::fabs(approx[c]);
    best_lower = std::max(best_lower, approx[c] - err[c]);
  }
  int best = -1;
  float best_logit = -INFINITY;
  for (int c = 0; c < V; ++c) {
    if (!(approx[c] + err[c] >= best_lower)) continue;
    const float logit = dot(x, M.embed + size_t(c) * D, D);
    if (best < 0 || logit > best_logit) best = c, best_logit = logit;
  }
  return best;
}

inline std::vector<std::vector<int>> greedy(const Model& M, const Memory& mem, int B, const Options& o, Scratch& s) {
  std::vector<std::vector<int>> out(B);
  Rows rows;
  for (int b = 0; b < B; ++b) rows.sentence.push_back(b), rows.ancestry.emplace_back();
  std::vector<int> tokens(B, M.bos);
  std::vector<StepCache> cache;
  std::vector<float> logits, x;
  const bool screened = !M.lm_head.int8;
  for (int t = 0; t < o.max_new_tokens && rows.count() > 0; ++t) {
    const int N = rows.count();
    logits.resize(size_t(N) * M.vocab_padded);
    decode_step(M, mem, rows, tokens.data(), t, cache, x, s);
    linear(screened ? M.lm_screen : M.lm_head, x.data(), N, logits.data(), s);  // s.xs: the rows' scales
    Rows next;
    std::vector<int> next_tokens;
    for (int r = 0; r < N; ++r) {
      const int b = rows.sentence[r];
      float* row = logits.data() + size_t(r) * M.vocab_padded;
      int token;
      if (o.forced(t)) {
        token = o.prefix[t];
      } else if (screened) {
        token = exact_arg_max(M, o, x.data() + size_t(r) * M.d_model, t, out[b], row, s.xs[r] / 2);
      } else {
        for (int j = M.vocab; j < M.vocab_padded; ++j) row[j] = -INFINITY;
        ban(M, o, row, t, out[b]);
        token = arg_max(row, M.vocab_padded);
      }
      out[b].push_back(token);
      if (token == M.eos) continue;  // finished: leaves the batch
      next.sentence.push_back(b);
      next.ancestry.push_back(rows.ancestry[r]);
      next.ancestry.back().push_back(r);
      next_tokens.push_back(token);
    }
    rows = std::move(next);
    tokens = std::move(next_tokens);
  }
  return out;
}

struct Hypothesis {
  float score;
  std::vector<int> ids;
};

// Keeps the K best of a sentence's finished hypotheses, best first (an earlier one first on a tie).
inline void offer(std::vector<Hypothesis>& finished, Hypothesis h, int K) {
  if (!(h.score > -INFINITY)) return;
  auto at = std::upper_bound(finished.begin(), finished.end(), h.score,
                             [](float score, const Hypothesis& x) { return score > x.score; });
  finished.insert(at, std::move(h));
  if (int(finished.size()) > K) finished.pop_back();
}

struct Candidate {
  float score;
  int beam, token;
};

inline std::vector<std::vector<int>> beam(const Model& M, const Memory& mem, int B, const Options& o, Scratch& s) {
  const int K = o.num_beams, V = M.vocab_padded;
  std::vector<std::vector<Hypothesis>> finished(B);
  Rows rows;  // the first step: one row a sentence (its K beams are all BOS)
  std::vector<std::vector<int>> written;
  std::vector<std::vector<float>> beam_scores;  // per active sentence, its K (or, at first, 1) live beams
  std::vector<int> active;
  for (int b = 0; b < B; ++b)
    rows.sentence.push_back(b), rows.ancestry.emplace_back(), written.emplace_back(), beam_scores.push_back({0.0f}),
        active.push_back(b);
  std::vector<int> tokens(B, M.bos);
  std::vector<StepCache> cache;
  std::vector<float> logits, x;
  int t = 0;
  for (; t < o.max_new_tokens; ++t) {
    const int N = rows.count();
    logits.resize(size_t(N) * V);
    decode_step(M, mem, rows, tokens.data(), t, cache, x, s);
    output_layer(M, x.data(), N, logits.data(), s);
    std::vector<std::vector<std::pair<float, int>>> row_top(N);
    for (int r = 0; r < N; ++r) {
      float* row = logits.data() + size_t(r) * V;
      ban(M, o, row, t, o.forced(t) ? std::vector<int>() : written[r]);  // a forced piece is never banned
      const float lse = log_sum_exp(row, V);
      if (o.forced(t)) {  // only the forced piece stays, with the log-probability the model gave it
        row_top[r] = {{row[o.prefix[t]] - lse, o.prefix[t]}};
        continue;
      }
      row_top[r] = top_k(row, V, 2 * K);
      for (auto& [lp, token] : row_top[r]) lp -= lse;
    }
    const float norm = float(std::pow(double(t + 1), double(o.length_penalty)));
    Rows next;
    std::vector<std::vector<int>> next_written;
    std::vector<std::vector<float>> next_scores;
    std::vector<int> next_active, next_tokens;
    int first_row = 0;
    for (size_t i = 0; i < active.size(); ++i) {
      const int b = active[i], beams = int(beam_scores[i].size());
      std::vector<Candidate> cand;
      for (int j = 0; j < beams; ++j)
        for (auto [lp, token] : row_top[first_row + j]) cand.push_back({beam_scores[i][j] + lp, j, token});
      std::stable_sort(cand.begin(), cand.end(), [](const Candidate& a, const Candidate& c) { return a.score > c.score; });
      cand.resize(std::min<size_t>(cand.size(), 2 * K));
      for (int c = 0; c < K && c < int(cand.size()); ++c) {  // EOS among the K best ends a hypothesis
        if (cand[c].token != M.eos) continue;
        std::vector<int> ids = written[first_row + cand[c].beam];
        ids.push_back(M.eos);
        offer(finished[b], {cand[c].score / norm, std::move(ids)}, K);
      }
      std::vector<Candidate> live;
      for (const Candidate& c : cand)
        if (c.token != M.eos && int(live.size()) < K) live.push_back(c);
      // (While a prefix is forced a sentence has one live beam: the others would be -inf.)
      const bool done = int(finished[b].size()) == K && live[0].score / norm <= finished[b].back().score;
      if (!done) {
        next_active.push_back(b);
        next_scores.emplace_back();
        for (const Candidate& c : live) {
          const int parent = first_row + c.beam;
          next.sentence.push_back(b);
          next.ancestry.push_back(rows.ancestry[parent]);
          next.ancestry.back().push_back(parent);
          next_written.push_back(written[parent]);
          next_written.back().push_back(c.token);
          next_scores.back().push_back(c.score);
          next_tokens.push_back(c.token);
        }
      }
      first_row += beams;
    }
    rows = std::move(next), written = std::move(next_written), beam_scores = std::move(next_scores);
    active = std::move(next_active), tokens = std::move(next_tokens);
    if (active.empty()) break;
  }
  if (!active.empty()) {  // out of steps: the live beams compete as they are
    const float norm = float(std::pow(double(o.max_new_tokens), double(o.length_penalty)));
    for (size_t i = 0, row = 0; i < active.size(); ++i)
      for (float score : beam_scores[i]) offer(finished[active[i]], {score / norm, written[row++]}, K);
  }
  std::vector<std::vector<int>> out(B);
  for (int b = 0; b < B; ++b)
    if (!finished[b].empty()) out[b] = finished[b][0].ids;
  return out;
}

}  // namespace native
