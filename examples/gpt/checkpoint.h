// Checkpoints of one pipeline stage's TrainState on disk.
//
// A stage's checkpoint of step N is the file DIR/stage<S>-step<N>.ckpt:
//   header, 96 bytes, little-endian:
//     magic "TMGPTCK\0", u32 version (1), u32 header size (96),
//     i32 vocab, d_model, n_layers, n_heads, seq_len, ffn_mult,
//     i32 stage, stages, first_layer, end_layer,
//     u64 parameter count, u64 step, u64 seed, u64 data_position,
//     u32 CRC-32C of the payload, u32 CRC-32C of the 92 header bytes before it
//   payload: params, adam_m, adam_v (float32[P] each, state.h)
// It is written atomically (a temporary file, fsync, rename; mode 0640), so a
// reader sees a whole checkpoint or none. Loading refuses, naming the file
// and the cause, one that is truncated, damaged (checksums), of another
// format version, or of another model shape or stage split. Only DP index 0
// of a stage writes (its replicas hold the same state); every replica loads.
#pragma once

#include <cstdint>
#include <string>

#include "shape.h"
#include "state.h"

namespace trainmover::gpt {

std::string checkpoint_path(const std::string& dir, int stage, uint64_t step);

// Writes the stage's checkpoint of state.counters.step, creating `dir`
// (mode 0750) when missing, then removes the stage's checkpoints other than
// the `keep` latest.
Status save_checkpoint(const std::string& dir, const ModelShape& shape, const StageSpan& span,
                       const TrainState& state, int keep = 2);

// The latest step <= at_most with a checkpoint of `stage` in `dir`, 0 when
// there is none (or no such directory).
Result<uint64_t> latest_checkpoint_step(const std::string& dir, int stage,
                                        uint64_t at_most = UINT64_MAX);

// Replaces `state` with the checkpoint at `path`, or fails leaving it as it
// was. The checkpoint must be of state.counters.seed, and its data position
// that of its step at `batch` sequences per step.
Status load_checkpoint(const std::string& path, const ModelShape& shape, const StageSpan& span,
                       int batch, TrainState& state);

}  // namespace trainmover::gpt
