// A pipeline stage: its share of the model (shape.h), forward and backward
// of one micro-batch of `batch` sequences.
//
// Activations pass between stages as [batch*seq_len, d_model] arrays: the
// output of a stage's last block is the input of the next stage's first.
// Stage holds only the shape; parameters, gradients and caches are the
// caller's, so one Stage serves any number of micro-batches in flight.
#pragma once

#include <cstdint>
#include <vector>

#include "block.h"
#include "param_layout.h"
#include "shape.h"

namespace trainmover::gpt {

template <typename T>
struct StageCache {
  std::vector<int32_t> tokens;   // first stage: the input bytes, set by the caller
  std::vector<int32_t> targets;  // last stage: the next bytes, set by the caller
  std::vector<BlockCache<T>> blocks;
  std::vector<T> out;                        // the last block's output
  std::vector<T> hf, mean_f, rstd_f, probs;  // last stage: final LayerNorm, softmax
};

template <typename T>
class Stage {
 public:
  Stage(const ModelShape& shape, const StageSpan& span, int batch);

  const ModelShape& shape() const { return shape_; }
  const StageSpan& span() const { return span_; }
  const ParamLayout& layout() const { return layout_; }
  int rows() const { return batch_ * shape_.seq_len; }
  // Values in the activation (and its gradient) sent between stages.
  size_t activation_count() const { return static_cast<size_t>(rows()) * shape_.d_model; }

  // Sizes every buffer of `cache` for this stage.
  void resize(StageCache<T>& cache) const;

  // Runs the stage on cache.tokens (first stage) or x_in (activation_count
  // values). On the last stage, returns the sum of the token losses of
  // cache.targets; elsewhere returns 0 and leaves the output in cache.out.
  T forward(const T* params, const T* x_in, StageCache<T>& cache) const;

  // Adds the parameters' gradients to `grads`. dy_out is the gradient of
  // cache.out (not on the last stage); loss_scale is d(loss)/d(loss sum) on
  // the last stage. Writes the input's gradient to dx_in (not on the first).
  void backward(const T* params, const StageCache<T>& cache, const T* dy_out, T loss_scale,
                T* grads, T* dx_in) const;

 private:
  // The last stage's head: final LayerNorm, LM head, cross-entropy.
  T head_forward(const T* params, StageCache<T>& cache) const;
  void head_backward(const T* params, const StageCache<T>& cache, T loss_scale, T* grads,
                     T* dout) const;

  ModelShape shape_;
  StageSpan span_;
  int batch_;
  ParamLayout layout_;
};

}  // namespace trainmover::gpt
