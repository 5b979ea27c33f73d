#include "stage.h"

#include <algorithm>

#include "kernels.h"

namespace trainmover::gpt {

template <typename T>
Stage<T>::Stage(const ModelShape& shape, const StageSpan& span, int batch)
    : shape_(shape), span_(span), batch_(batch), layout_(shape, span) {}

template <typename T>
void Stage<T>::resize(StageCache<T>& cache) const {
  const size_t rows = this->rows(), c = shape_.d_model;
  cache.tokens.assign(span_.first() ? rows : 0, 0);
  cache.targets.assign(span_.last() ? rows : 0, 0);
  cache.blocks.resize(span_.layers());
  for (auto& block : cache.blocks) block.resize(shape_, batch_);
  cache.out.assign(rows * c, T(0));
  const size_t head_rows = span_.last() ? rows : 0;
  cache.hf.assign(head_rows * c, T(0));
  cache.mean_f.assign(head_rows, T(0));
  cache.rstd_f.assign(head_rows, T(0));
  cache.probs.assign(head_rows * shape_.vocab, T(0));
}

template <typename T>
T Stage<T>::forward(const T* params, const T* x_in, StageCache<T>& cache) const {
  const int c = shape_.d_model;
  std::vector<T>& x0 = cache.blocks.front().x;
  if (span_.first()) {
    embedding_forward(cache.tokens.data(), params + layout_.tok_emb, params + layout_.pos_emb,
                      x0.data(), rows(), shape_.seq_len, c);
  } else {
    std::copy(x_in, x_in + activation_count(), x0.begin());
  }
  for (size_t j = 0; j < cache.blocks.size(); ++j) {
    T* y = j + 1 < cache.blocks.size() ? cache.blocks[j + 1].x.data() : cache.out.data();
    block_forward(shape_, batch_, params, layout_.blocks[j], cache.blocks[j], y);
  }
  return span_.last() ? head_forward(params, cache) : T(0);
}

template <typename T>
T Stage<T>::head_forward(const T* params, StageCache<T>& cache) const {
  const int c = shape_.d_model, v = shape_.vocab;
  layernorm_forward(cache.out.data(), params + layout_.lnf_g, params + layout_.lnf_b,
                    cache.hf.data(), cache.mean_f.data(), cache.rstd_f.data(), rows(), c);
  std::vector<T> logits(cache.probs.size());
  linear_forward(cache.hf.data(), params + layout_.head_w, params + layout_.head_b, logits.data(),
                 rows(), c, v);
  return cross_entropy_forward(logits.data(), cache.targets.data(), cache.probs.data(), rows(), v);
}

template <typename T>
void Stage<T>::head_backward(const T* params, const StageCache<T>& cache, T loss_scale, T* grads,
                             T* dout) const {
  const int c = shape_.d_model, v = shape_.vocab;
  std::vector<T> dlogits(cache.probs.size(), T(0)), dhf(cache.hf.size(), T(0));
  cross_entropy_backward(cache.probs.data(), cache.targets.data(), loss_scale, dlogits.data(),
                         rows(), v);
  linear_backward(cache.hf.data(), params + layout_.head_w, dlogits.data(), dhf.data(),
                  grads + layout_.head_w, grads + layout_.head_b, rows(), c, v);
  layernorm_backward(cache.out.data(), params + layout_.lnf_g, cache.mean_f.data(),
                     cache.rstd_f.data(), dhf.data(), dout, grads + layout_.lnf_g,
                     grads + layout_.lnf_b, rows(), c);
}

template <typename T>
void Stage<T>::backward(const T* params, const StageCache<T>& cache, const T* dy_out, T loss_scale,
                        T* grads, T* dx_in) const {
  std::vector<T> dy(activation_count(), T(0));
  if (span_.last()) {
    head_backward(params, cache, loss_scale, grads, dy.data());
  } else {
    std::copy(dy_out, dy_out + dy.size(), dy.begin());
  }
  for (size_t j = cache.blocks.size(); j-- > 0;) {
    std::vector<T> dx(dy.size(), T(0));
    block_backward(shape_, batch_, params, layout_.blocks[j], cache.blocks[j], dy.data(), grads,
                   dx.data());
    dy.swap(dx);
  }
  if (span_.first()) {
    embedding_backward(cache.tokens.data(), dy.data(), grads + layout_.tok_emb,
                       grads + layout_.pos_emb, rows(), shape_.seq_len, shape_.d_model);
  } else {
    std::copy(dy.begin(), dy.end(), dx_in);
  }
}

template class Stage<float>;
template class Stage<double>;

}  // namespace trainmover::gpt
