// The model's shape and how a pipeline stage's share of it is chosen.
//
// The model is a GPT-style decoder: token embedding + learned positions,
// n_layers pre-LayerNorm blocks (causal multi-head self-attention, GELU MLP),
// a final LayerNorm and an LM head. A pipeline of `stages` stages cuts it
// between blocks: stage s holds a contiguous run of blocks, the first stage
// also the embeddings, the last also the final LayerNorm and the head.
#pragma once

#include "common/status.h"

namespace trainmover::gpt {

struct ModelShape {
  int vocab = 256;  // byte-level
  int d_model = 32;
  int n_layers = 2;
  int n_heads = 4;
  int seq_len = 32;
  int ffn_mult = 4;  // the MLP's hidden width is ffn_mult * d_model

  int d_ff() const { return ffn_mult * d_model; }
  int head_dim() const { return d_model / n_heads; }
  bool operator==(const ModelShape&) const = default;
};

// Fails naming the field when a value is out of range or inconsistent
// (d_model must divide by n_heads).
Status validate(const ModelShape& shape);

// The blocks [first_layer, end_layer) of stage `stage` of `stages`.
struct StageSpan {
  int stage = 0;
  int stages = 1;
  int first_layer = 0;
  int end_layer = 0;

  bool first() const { return stage == 0; }
  bool last() const { return stage == stages - 1; }
  int layers() const { return end_layer - first_layer; }
  bool operator==(const StageSpan&) const = default;
};

// Splits the blocks as evenly as possible, earlier stages taking the extra
// ones. Fails when there are more stages than blocks.
Result<StageSpan> stage_span(const ModelShape& shape, int stage, int stages);

}  // namespace trainmover::gpt
