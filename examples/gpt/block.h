// One transformer block, pre-LayerNorm:
//   x2 = x + W_o attn(LN1(x));  y = x2 + W_proj gelu(W_fc LN2(x2))
// with `params` and `grads` the stage's flat buffers (param_layout.h) and
// `off` the block's offsets in them.
#pragma once

#include <vector>

#include "param_layout.h"
#include "shape.h"

namespace trainmover::gpt {

// What the backward pass needs from the forward pass of one micro-batch.
template <typename T>
struct BlockCache {
  std::vector<T> x;  // the input, [rows, c]: set by the caller before forward
  std::vector<T> h1, mean1, rstd1, qkv, probs, att, x2, h2, mean2, rstd2, u, g;

  void resize(const ModelShape& shape, int batch);
};

// Reads cache.x, fills the rest of `cache` and writes the output y [rows, c].
template <typename T>
void block_forward(const ModelShape& shape, int batch, const T* params, const BlockOffsets& off,
                   BlockCache<T>& cache, T* y);

// From dy [rows, c], adds the parameters' gradients to `grads` and the
// input's to dx [rows, c].
template <typename T>
void block_backward(const ModelShape& shape, int batch, const T* params, const BlockOffsets& off,
                    const BlockCache<T>& cache, const T* dy, T* grads, T* dx);

}  // namespace trainmover::gpt
