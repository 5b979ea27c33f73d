// Causal multi-head self-attention (declared in kernels.h).
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels.h"

namespace trainmover::gpt {
namespace {

// One head's q, k and v in the rows of one sequence of a [rows, 3c] array
// (P is T or const T: the activations or their gradients).
template <typename P>
struct HeadView {
  P* base;     // row 0 of the sequence
  size_t row;  // stride between rows: 3c
  size_t q, k, v;

  P* query(int t) const { return base + t * row + q; }
  P* key(int t) const { return base + t * row + k; }
  P* value(int t) const { return base + t * row + v; }
};

template <typename P>
HeadView<P> head_view(P* qkv, const AttentionShape& s, int b, int h) {
  const size_t d = s.c / s.heads, row = 3 * static_cast<size_t>(s.c);
  return {qkv + static_cast<size_t>(b) * s.seq * row, row, h * d, s.c + h * d, 2 * s.c + h * d};
}

template <typename T>
T dot(const T* a, const T* b, int d) {
  T acc = 0;
  for (int j = 0; j < d; ++j) acc += a[j] * b[j];
  return acc;
}

}  // namespace

template <typename T>
void attention_forward(const T* qkv, T* out, T* probs, const AttentionShape& s) {
  const int d = s.c / s.heads;
  const T scale = T(1) / std::sqrt(T(d));
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const HeadView<const T> view = head_view(qkv, s, b, h);
      for (int t = 0; t < s.seq; ++t) {
        T* p = probs + ((static_cast<size_t>(b) * s.heads + h) * s.seq + t) * s.seq;
        T max = 0;
        for (int u = 0; u <= t; ++u) {
          p[u] = dot(view.query(t), view.key(u), d) * scale;
          max = (u == 0 || p[u] > max) ? p[u] : max;
        }
        T sum = 0;
        for (int u = 0; u <= t; ++u) {
          p[u] = std::exp(p[u] - max);
          sum += p[u];
        }
        T* o = out + (static_cast<size_t>(b) * s.seq + t) * s.c + h * d;
        for (int j = 0; j < d; ++j) o[j] = 0;
        for (int u = 0; u <= t; ++u) {
          p[u] /= sum;
          const T* vu = view.value(u);
          for (int j = 0; j < d; ++j) o[j] += p[u] * vu[j];
        }
      }
    }
  }
}

template <typename T>
void attention_backward(const T* qkv, const T* probs, const T* dout, T* dqkv,
                        const AttentionShape& s) {
  const int d = s.c / s.heads;
  const T scale = T(1) / std::sqrt(T(d));
  std::vector<T> dp(s.seq);
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const HeadView<const T> view = head_view(qkv, s, b, h);
      const HeadView<T> grad = head_view(dqkv, s, b, h);
      for (int t = 0; t < s.seq; ++t) {
        const T* p = probs + ((static_cast<size_t>(b) * s.heads + h) * s.seq + t) * s.seq;
        const T* o = dout + (static_cast<size_t>(b) * s.seq + t) * s.c + h * d;
        T weighted = 0;
        for (int u = 0; u <= t; ++u) {
          dp[u] = dot(o, view.value(u), d);
          weighted += p[u] * dp[u];
          T* dv = grad.value(u);
          for (int j = 0; j < d; ++j) dv[j] += p[u] * o[j];
        }
        T* dq = grad.query(t);
        for (int u = 0; u <= t; ++u) {
          const T dscore = p[u] * (dp[u] - weighted) * scale;
          const T* ku = view.key(u);
          const T* qt = view.query(t);
          T* dk = grad.key(u);
          for (int j = 0; j < d; ++j) {
            dq[j] += dscore * ku[j];
            dk[j] += dscore * qt[j];
          }
        }
      }
    }
  }
}

template void attention_forward<float>(const float*, float*, float*, const AttentionShape&);
template void attention_forward<double>(const double*, double*, double*, const AttentionShape&);
template void attention_backward<float>(const float*, const float*, const float*, float*,
                                        const AttentionShape&);
template void attention_backward<double>(const double*, const double*, const double*, double*,
                                         const AttentionShape&);

}  // namespace trainmover::gpt
