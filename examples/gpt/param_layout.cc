#include "param_layout.h"

namespace trainmover::gpt {

using Init = TensorInfo::Init;

size_t ParamLayout::add(std::string name, size_t count, Init init, bool decay) {
  size_t offset = total_;
  tensors_.push_back({std::move(name), offset, count, decay, init});
  total_ += count;
  return offset;
}

ParamLayout::ParamLayout(const ModelShape& shape, const StageSpan& span) {
  const size_t c = shape.d_model, f = shape.d_ff(), v = shape.vocab;
  if (span.first()) {
    tok_emb = add("tok_emb", v * c, Init::kNormal, true);
    pos_emb = add("pos_emb", static_cast<size_t>(shape.seq_len) * c, Init::kNormal, true);
  }
  for (int l = span.first_layer; l < span.end_layer; ++l) {
    const std::string p = "block" + std::to_string(l) + ".";
    BlockOffsets b{};
    b.ln1_g = add(p + "ln1_g", c, Init::kOne, false);
    b.ln1_b = add(p + "ln1_b", c, Init::kZero, false);
    b.w_qkv = add(p + "w_qkv", c * 3 * c, Init::kNormal, true);
    b.b_qkv = add(p + "b_qkv", 3 * c, Init::kZero, false);
    b.w_o = add(p + "w_o", c * c, Init::kResidualOut, true);
    b.b_o = add(p + "b_o", c, Init::kZero, false);
    b.ln2_g = add(p + "ln2_g", c, Init::kOne, false);
    b.ln2_b = add(p + "ln2_b", c, Init::kZero, false);
    b.w_fc = add(p + "w_fc", c * f, Init::kNormal, true);
    b.b_fc = add(p + "b_fc", f, Init::kZero, false);
    b.w_proj = add(p + "w_proj", f * c, Init::kResidualOut, true);
    b.b_proj = add(p + "b_proj", c, Init::kZero, false);
    blocks.push_back(b);
  }
  if (span.last()) {
    lnf_g = add("lnf_g", c, Init::kOne, false);
    lnf_b = add("lnf_b", c, Init::kZero, false);
    head_w = add("head_w", c * v, Init::kNormal, true);
    head_b = add("head_b", v, Init::kZero, false);
  }
}

}  // namespace trainmover::gpt
