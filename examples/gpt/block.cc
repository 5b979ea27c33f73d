#include "block.h"

#include "kernels.h"

namespace trainmover::gpt {

template <typename T>
void BlockCache<T>::resize(const ModelShape& shape, int batch) {
  const size_t rows = static_cast<size_t>(batch) * shape.seq_len, c = shape.d_model;
  const size_t f = shape.d_ff();
  for (auto* v : {&x, &h1, &att, &x2, &h2}) v->assign(rows * c, T(0));
  for (auto* v : {&mean1, &rstd1, &mean2, &rstd2}) v->assign(rows, T(0));
  qkv.assign(rows * 3 * c, T(0));
  probs.assign(static_cast<size_t>(batch) * shape.n_heads * shape.seq_len * shape.seq_len, T(0));
  u.assign(rows * f, T(0));
  g.assign(rows * f, T(0));
}

template <typename T>
void block_forward(const ModelShape& shape, int batch, const T* params, const BlockOffsets& off,
                   BlockCache<T>& k, T* y) {
  const int rows = batch * shape.seq_len, c = shape.d_model, f = shape.d_ff();
  const T* p = params;
  layernorm_forward(k.x.data(), p + off.ln1_g, p + off.ln1_b, k.h1.data(), k.mean1.data(),
                    k.rstd1.data(), rows, c);
  linear_forward(k.h1.data(), p + off.w_qkv, p + off.b_qkv, k.qkv.data(), rows, c, 3 * c);
  attention_forward(k.qkv.data(), k.att.data(), k.probs.data(),
                    AttentionShape{batch, shape.seq_len, c, shape.n_heads});
  linear_forward(k.att.data(), p + off.w_o, p + off.b_o, k.x2.data(), rows, c, c);
  for (size_t i = 0; i < k.x2.size(); ++i) k.x2[i] += k.x[i];
  layernorm_forward(k.x2.data(), p + off.ln2_g, p + off.ln2_b, k.h2.data(), k.mean2.data(),
                    k.rstd2.data(), rows, c);
  linear_forward(k.h2.data(), p + off.w_fc, p + off.b_fc, k.u.data(), rows, c, f);
  gelu_forward(k.u.data(), k.g.data(), static_cast<int64_t>(k.u.size()));
  linear_forward(k.g.data(), p + off.w_proj, p + off.b_proj, y, rows, f, c);
  for (size_t i = 0; i < k.x2.size(); ++i) y[i] += k.x2[i];
}

template <typename T>
void block_backward(const ModelShape& shape, int batch, const T* params, const BlockOffsets& off,
                    const BlockCache<T>& k, const T* dy, T* grads, T* dx) {
  const int rows = batch * shape.seq_len, c = shape.d_model, f = shape.d_ff();
  const T* p = params;
  T* gr = grads;
  // MLP branch; the residual passes dy on to x2 unchanged.
  std::vector<T> dx2(dy, dy + k.x2.size());
  std::vector<T> dg(k.g.size(), T(0)), du(k.u.size(), T(0)), dh2(k.h2.size(), T(0));
  linear_backward(k.g.data(), p + off.w_proj, dy, dg.data(), gr + off.w_proj, gr + off.b_proj, rows,
                  f, c);
  gelu_backward(k.u.data(), dg.data(), du.data(), static_cast<int64_t>(du.size()));
  linear_backward(k.h2.data(), p + off.w_fc, du.data(), dh2.data(), gr + off.w_fc, gr + off.b_fc,
                  rows, c, f);
  layernorm_backward(k.x2.data(), p + off.ln2_g, k.mean2.data(), k.rstd2.data(), dh2.data(),
                     dx2.data(), gr + off.ln2_g, gr + off.ln2_b, rows, c);
  // Attention branch; the residual passes dx2 on to x.
  std::vector<T> datt(k.att.size(), T(0)), dqkv(k.qkv.size(), T(0)), dh1(k.h1.size(), T(0));
  linear_backward(k.att.data(), p + off.w_o, dx2.data(), datt.data(), gr + off.w_o, gr + off.b_o,
                  rows, c, c);
  attention_backward(k.qkv.data(), k.probs.data(), datt.data(), dqkv.data(),
                     AttentionShape{batch, shape.seq_len, c, shape.n_heads});
  linear_backward(k.h1.data(), p + off.w_qkv, dqkv.data(), dh1.data(), gr + off.w_qkv,
                  gr + off.b_qkv, rows, c, 3 * c);
  for (size_t i = 0; i < dx2.size(); ++i) dx[i] += dx2[i];
  layernorm_backward(k.x.data(), p + off.ln1_g, k.mean1.data(), k.rstd1.data(), dh1.data(), dx,
                     gr + off.ln1_g, gr + off.ln1_b, rows, c);
}

template struct BlockCache<float>;
template struct BlockCache<double>;
template void block_forward<float>(const ModelShape&, int, const float*, const BlockOffsets&,
                                   BlockCache<float>&, float*);
template void block_forward<double>(const ModelShape&, int, const double*, const BlockOffsets&,
                                    BlockCache<double>&, double*);
template void block_backward<float>(const ModelShape&, int, const float*, const BlockOffsets&,
                                    const BlockCache<float>&, const float*, float*, float*);
template void block_backward<double>(const ModelShape&, int, const double*, const BlockOffsets&,
                                     const BlockCache<double>&, const double*, double*, double*);

}  // namespace trainmover::gpt
