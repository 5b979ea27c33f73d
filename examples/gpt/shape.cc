#include "shape.h"

namespace trainmover::gpt {
namespace {

Status check_range(const char* name, int value, int min, int max) {
  if (value < min || value > max)
    return error(TM_ERROR_INVALID_ARGUMENT, name, " must be in [", min, ", ", max, "], not ",
                 value);
  return Status::Ok();
}

}  // namespace

Status validate(const ModelShape& shape) {
  TM_RETURN_IF_ERROR(check_range("vocab", shape.vocab, 2, 65536));
  TM_RETURN_IF_ERROR(check_range("d_model", shape.d_model, 1, 4096));
  TM_RETURN_IF_ERROR(check_range("n_layers", shape.n_layers, 1, 256));
  TM_RETURN_IF_ERROR(check_range("n_heads", shape.n_heads, 1, shape.d_model));
  TM_RETURN_IF_ERROR(check_range("seq_len", shape.seq_len, 1, 4096));
  TM_RETURN_IF_ERROR(check_range("ffn_mult", shape.ffn_mult, 1, 16));
  if (shape.d_model % shape.n_heads != 0)
    return error(TM_ERROR_INVALID_ARGUMENT, "d_model (", shape.d_model,
                 ") must be a multiple of n_heads (", shape.n_heads, ")");
  return Status::Ok();
}

Result<StageSpan> stage_span(const ModelShape& shape, int stage, int stages) {
  if (stages < 1 || stage < 0 || stage >= stages)
    return error(TM_ERROR_INVALID_ARGUMENT, "stage ", stage, " of ", stages, " does not exist");
  if (stages > shape.n_layers)
    return error(TM_ERROR_INVALID_ARGUMENT, "a pipeline of ", stages, " stages needs at least ",
                 stages, " layers, not ", shape.n_layers);
  int base = shape.n_layers / stages;
  int extra = shape.n_layers % stages;
  StageSpan span;
  span.stage = stage;
  span.stages = stages;
  span.first_layer = stage * base + (stage < extra ? stage : extra);
  span.end_layer = span.first_layer + base + (stage < extra ? 1 : 0);
  return span;
}

}  // namespace trainmover::gpt
