// The collectives `trainmover-bench` measures, and what one measured call
// is: its buffers' element counts, its input, the result it must give and its
// bus bandwidth. Header-only, so that the OpenMPI peer (a separate program,
// built with mpicc's flags) follows the same definitions as the other
// implementations.
//
// Sizes follow nccl-tests: `bytes` is the larger buffer of the call (the
// buffer of allreduce and broadcast, the input of reduce_scatter, the output
// of allgather), float32, so each rank's block of reduce_scatter and
// allgather is bytes / 4 / nranks elements (rounded down; the bytes that do
// not fill a block are left out). Every rank's input holds slot + 1 in every
// element; broadcast's root is slot 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trainmover::bench {

enum class Collective { kAllreduce, kReduceScatter, kAllgather, kBroadcast };

inline constexpr Collective kCollectives[] = {Collective::kAllreduce, Collective::kReduceScatter,
                                              Collective::kAllgather, Collective::kBroadcast};

// The subcommand name and the `op` key of the output.
inline const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllreduce:
      return "allreduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllgather:
      return "allgather";
    case Collective::kBroadcast:
      return "broadcast";
  }
  return "?";
}

inline std::optional<Collective> collective_named(std::string_view name) {
  for (Collective c : kCollectives) {
    if (name == collective_name(c)) return c;
  }
  return std::nullopt;
}

// Element counts of one call of `c` over `nranks` ranks for a size of `bytes`.
struct CollectiveShape {
  size_t send_count = 0;   // elements of the input
  size_t recv_count = 0;   // elements of the output
  size_t moved_bytes = 0;  // what busbw is computed from: the larger buffer actually used
};

inline CollectiveShape collective_shape(Collective c, uint64_t bytes, int nranks) {
  const size_t count = static_cast<size_t>(bytes / sizeof(float));
  const size_t n = static_cast<size_t>(nranks);
  const size_t block = count / n;
  switch (c) {
    case Collective::kReduceScatter:
      return {block * n, block, block * n * sizeof(float)};
    case Collective::kAllgather:
      return {block, block * n, block * n * sizeof(float)};
    case Collective::kAllreduce:
    case Collective::kBroadcast:
      break;
  }
  return {count, count, count * sizeof(float)};
}

// The smallest size `bytes` may have for `c` over `nranks`: one element per block.
inline uint64_t collective_min_bytes(Collective c, int nranks) {
  bool blocked = c == Collective::kReduceScatter || c == Collective::kAllgather;
  return sizeof(float) * static_cast<uint64_t>(blocked ? nranks : 1);
}

// The factor nccl-tests applies to algorithm bandwidth: allreduce moves
// 2(N-1)/N of the buffer over each rank's link, reduce_scatter and allgather
// (N-1)/N, broadcast all of it once.
inline double busbw_factor(Collective c, int nranks) {
  const double n = nranks;
  switch (c) {
    case Collective::kAllreduce:
      return 2 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllgather:
      return (n - 1) / n;
    case Collective::kBroadcast:
      return 1;
  }
  return 0;
}

// What element `i` of slot `slot`'s output must hold, the inputs being slot + 1.
inline float expected_output(Collective c, size_t i, size_t recv_count, int nranks) {
  switch (c) {
    case Collective::kAllreduce:
    case Collective::kReduceScatter:
      return static_cast<float>(nranks) * static_cast<float>(nranks + 1) / 2;
    case Collective::kAllgather: {
      size_t block = recv_count / static_cast<size_t>(nranks);
      return static_cast<float>(i / block + 1);
    }
    case Collective::kBroadcast:
      return 1.0f;  // the root, slot 0
  }
  return 0;
}

// The first element of `out` that is not what it must be, or -1.
inline int64_t first_wrong_output(Collective c, const float* out, size_t recv_count, int nranks) {
  for (size_t i = 0; i < recv_count; ++i) {
    if (out[i] != expected_output(c, i, recv_count, nranks)) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace trainmover::bench
