#include "kernels.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace trainmover::gpt {

template <typename T>
void linear_forward(const T* x, const T* w, const T* b, T* y, int n, int in, int out) {
  for (int r = 0; r < n; ++r) {
    T* yr = y + static_cast<size_t>(r) * out;
    for (int o = 0; o < out; ++o) yr[o] = b[o];
    const T* xr = x + static_cast<size_t>(r) * in;
    for (int i = 0; i < in; ++i) {
      const T xi = xr[i];
      const T* wi = w + static_cast<size_t>(i) * out;
      for (int o = 0; o < out; ++o) yr[o] += xi * wi[o];
    }
  }
}

template <typename T>
void linear_backward(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, int n, int in,
                     int out) {
  // dx through w transposed, so that every inner loop runs over contiguous
  // memory without a serial reduction, and vectorises.
  std::vector<T> wt(dx != nullptr ? static_cast<size_t>(in) * out : 0);
  for (size_t i = 0; i < static_cast<size_t>(in) && dx != nullptr; ++i)
    for (size_t o = 0; o < static_cast<size_t>(out); ++o) wt[o * in + i] = w[i * out + o];
  for (int r = 0; r < n; ++r) {
    const T* dyr = dy + static_cast<size_t>(r) * out;
    const T* xr = x + static_cast<size_t>(r) * in;
    for (int o = 0; o < out; ++o) db[o] += dyr[o];
    for (int i = 0; i < in; ++i) {
      T* dwi = dw + static_cast<size_t>(i) * out;
      const T xi = xr[i];
      for (int o = 0; o < out; ++o) dwi[o] += xi * dyr[o];
    }
    if (dx == nullptr) continue;
    T* dxr = dx + static_cast<size_t>(r) * in;
    for (int o = 0; o < out; ++o) {
      const T d = dyr[o];
      const T* wto = wt.data() + static_cast<size_t>(o) * in;
      for (int i = 0; i < in; ++i) dxr[i] += d * wto[i];
    }
  }
}

template <typename T>
void layernorm_forward(const T* x, const T* g, const T* b, T* y, T* mean, T* rstd, int n, int c) {
  constexpr T kEps = T(1e-5);
  for (int r = 0; r < n; ++r) {
    const T* xr = x + static_cast<size_t>(r) * c;
    T sum = 0;
    for (int i = 0; i < c; ++i) sum += xr[i];
    const T m = sum / T(c);
    T var = 0;
    for (int i = 0; i < c; ++i) var += (xr[i] - m) * (xr[i] - m);
    const T s = T(1) / std::sqrt(var / T(c) + kEps);
    T* yr = y + static_cast<size_t>(r) * c;
    for (int i = 0; i < c; ++i) yr[i] = (xr[i] - m) * s * g[i] + b[i];
    mean[r] = m;
    rstd[r] = s;
  }
}

template <typename T>
void layernorm_backward(const T* x, const T* g, const T* mean, const T* rstd, const T* dy, T* dx,
                        T* dg, T* db, int n, int c) {
  for (int r = 0; r < n; ++r) {
    const T* xr = x + static_cast<size_t>(r) * c;
    const T* dyr = dy + static_cast<size_t>(r) * c;
    // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
    T sum_dxhat = 0, sum_dxhat_xhat = 0;
    for (int i = 0; i < c; ++i) {
      const T xhat = (xr[i] - mean[r]) * rstd[r];
      const T dxhat = dyr[i] * g[i];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += dxhat * xhat;
      dg[i] += dyr[i] * xhat;
      db[i] += dyr[i];
    }
    const T mean_dxhat = sum_dxhat / T(c), mean_dxhat_xhat = sum_dxhat_xhat / T(c);
    T* dxr = dx + static_cast<size_t>(r) * c;
    for (int i = 0; i < c; ++i) {
      const T xhat = (xr[i] - mean[r]) * rstd[r];
      dxr[i] += rstd[r] * (dyr[i] * g[i] - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
}

namespace {
// sqrt(2 / pi), and the cubic term's coefficient of the tanh approximation.
template <typename T>
constexpr T kGeluScale = T(0.7978845608028654);
template <typename T>
constexpr T kGeluCubic = T(0.044715);
}  // namespace

template <typename T>
void gelu_forward(const T* x, T* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const T v = x[i];
    y[i] = T(0.5) * v * (T(1) + std::tanh(kGeluScale<T> * (v + kGeluCubic<T> * v * v * v)));
  }
}

template <typename T>
void gelu_backward(const T* x, const T* dy, T* dx, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const T v = x[i];
    const T th = std::tanh(kGeluScale<T> * (v + kGeluCubic<T> * v * v * v));
    const T dth = (T(1) - th * th) * kGeluScale<T> * (T(1) + T(3) * kGeluCubic<T> * v * v);
    dx[i] += dy[i] * (T(0.5) * (T(1) + th) + T(0.5) * v * dth);
  }
}

template <typename T>
void embedding_forward(const int32_t* tokens, const T* tok, const T* pos, T* x, int n, int seq,
                       int c) {
  for (int r = 0; r < n; ++r) {
    const T* tr = tok + static_cast<size_t>(tokens[r]) * c;
    const T* pr = pos + static_cast<size_t>(r % seq) * c;
    T* xr = x + static_cast<size_t>(r) * c;
    for (int i = 0; i < c; ++i) xr[i] = tr[i] + pr[i];
  }
}

template <typename T>
void embedding_backward(const int32_t* tokens, const T* dx, T* dtok, T* dpos, int n, int seq,
                        int c) {
  for (int r = 0; r < n; ++r) {
    T* dtr = dtok + static_cast<size_t>(tokens[r]) * c;
    T* dpr = dpos + static_cast<size_t>(r % seq) * c;
    const T* dxr = dx + static_cast<size_t>(r) * c;
    for (int i = 0; i < c; ++i) {
      dtr[i] += dxr[i];
      dpr[i] += dxr[i];
    }
  }
}

template <typename T>
T cross_entropy_forward(const T* logits, const int32_t* targets, T* probs, int n, int v) {
  T loss = 0;
  for (int r = 0; r < n; ++r) {
    const T* lr = logits + static_cast<size_t>(r) * v;
    T* pr = probs + static_cast<size_t>(r) * v;
    T max = lr[0];
    for (int i = 1; i < v; ++i) max = lr[i] > max ? lr[i] : max;
    T sum = 0;
    for (int i = 0; i < v; ++i) {
      pr[i] = std::exp(lr[i] - max);
      sum += pr[i];
    }
    for (int i = 0; i < v; ++i) pr[i] /= sum;
    loss += std::log(sum) - (lr[targets[r]] - max);
  }
  return loss;
}

template <typename T>
void cross_entropy_backward(const T* probs, const int32_t* targets, T scale, T* dlogits, int n,
                            int v) {
  for (int r = 0; r < n; ++r) {
    const T* pr = probs + static_cast<size_t>(r) * v;
    T* dr = dlogits + static_cast<size_t>(r) * v;
    for (int i = 0; i < v; ++i) dr[i] += scale * (pr[i] - (i == targets[r] ? T(1) : T(0)));
  }
}

#define TM_GPT_INSTANTIATE(T)                                                                   \
  template void linear_forward<T>(const T*, const T*, const T*, T*, int, int, int);             \
  template void linear_backward<T>(const T*, const T*, const T*, T*, T*, T*, int, int, int);    \
  template void layernorm_forward<T>(const T*, const T*, const T*, T*, T*, T*, int, int);       \
  template void layernorm_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, \
                                      T*, int, int);                                            \
  template void gelu_forward<T>(const T*, T*, int64_t);                                         \
  template void gelu_backward<T>(const T*, const T*, T*, int64_t);                              \
  template void embedding_forward<T>(const int32_t*, const T*, const T*, T*, int, int, int);    \
  template void embedding_backward<T>(const int32_t*, const T*, T*, T*, int, int, int);         \
  template T cross_entropy_forward<T>(const T*, const int32_t*, T*, int, int);                  \
  template void cross_entropy_backward<T>(const T*, const int32_t*, T, T*, int, int);
TM_GPT_INSTANTIATE(float)
TM_GPT_INSTANTIATE(double)
#undef TM_GPT_INSTANTIATE

}  // namespace trainmover::gpt
