// Where each parameter tensor of a stage lives in the stage's flat buffer.
//
// A stage's parameters are one contiguous array, tensors back to back in
// model order:
//   first stage:  tok_emb [vocab, d_model], pos_emb [seq_len, d_model]
//   each block l: block<l>.ln1_g [C], .ln1_b [C], .w_qkv [C, 3C], .b_qkv [3C],
//                 .w_o [C, C], .b_o [C], .ln2_g [C], .ln2_b [C],
//                 .w_fc [C, F], .b_fc [F], .w_proj [F, C], .b_proj [C]
//   last stage:   lnf_g [C], lnf_b [C], head_w [C, vocab], head_b [vocab]
// (C = d_model, F = d_ff; matrices row-major [in, out]). So the stages'
// buffers, concatenated in stage order, are exactly the buffer of the whole
// model on one stage: a hash chained through the stages equals the
// single-stage hash. The gradient and AdamW moment buffers use the same layout.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "shape.h"

namespace trainmover::gpt {

struct TensorInfo {
  std::string name;  // globally unique, e.g. "block3.w_qkv"; keys the init
  size_t offset = 0;
  size_t count = 0;
  bool decay = false;  // weight decay applies (matrices and embeddings)
  enum class Init { kNormal, kResidualOut, kZero, kOne } init = Init::kZero;
};

struct BlockOffsets {
  size_t ln1_g, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_g, ln2_b, w_fc, b_fc, w_proj, b_proj;
};

class ParamLayout {
 public:
  ParamLayout(const ModelShape& shape, const StageSpan& span);

  size_t total() const { return total_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  // Valid on the first stage only.
  size_t tok_emb = 0, pos_emb = 0;
  // One per block of the stage, in order.
  std::vector<BlockOffsets> blocks;
  // Valid on the last stage only.
  size_t lnf_g = 0, lnf_b = 0, head_w = 0, head_b = 0;

 private:
  size_t add(std::string name, size_t count, TensorInfo::Init init, bool decay);

  std::vector<TensorInfo> tensors_;
  size_t total_ = 0;
};

}  // namespace trainmover::gpt
