// Which algorithm runs a collective, and the links the algorithms need.
//
// Every slot must run the same algorithm for a call, so the choice depends
// only on the call (its size in bytes and N) and on the communicator's
// policy, which every process of a job reads from the same TRAINMOVER_ALGO
// and TRAINMOVER_ALGO_THRESHOLDS (trainmover(7)).
//
// Two algorithms: the pipelined ring (comm/ring_plan.h), bandwidth-optimal,
// for large buffers, and recursive doubling (comm/doubling_plan.h), about
// log2 N dependent steps, for small ones: allreduce, allgather (and so the
// barrier) and broadcast have both; a small reduce_scatter is recursive
// doubling's allreduce, of which each slot keeps its block.
//
// Links: a communicator whose policy can choose recursive doubling links
// every pair of slots either algorithm exchanges over (the ring's
// neighbours and the doubling partners: at most log2(N) + 3 links a slot),
// at start-up and in every switch, so that no call connects anything and a
// switch still changes only the links that touch the replaced slot.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainmover {

enum class Algorithm { kRing, kDoubling };
enum class CollectiveKind { kAllreduce, kReduceScatter, kAllgather, kBroadcast };

const char* algorithm_name(Algorithm algorithm);

inline constexpr size_t kCollectiveKinds = 4;
const char* collective_kind_name(CollectiveKind kind);

// Per collective (index: CollectiveKind), the largest call, in bytes of its
// larger buffer, that runs recursive doubling (0: never).
using DoublingThresholds = std::array<size_t, kCollectiveKinds>;

struct AlgorithmPolicy {
  enum class Force { kNone, kRing, kDoubling };
  Force force = Force::kNone;  // TRAINMOVER_ALGO: auto, ring, doubling
  // TRAINMOVER_ALGO_THRESHOLDS. The defaults are where the two algorithms
  // crossed on 4 ranks of this project's reference host, capped at 1 MiB
  // for allgather and broadcast, where recursive doubling still won there
  // but moves more than the ring at larger N (docs/collectives.md).
  DoublingThresholds doubling_max_bytes = kDefaultDoublingMaxBytes;

  static constexpr DoublingThresholds kDefaultDoublingMaxBytes = {
      size_t{512} << 10,  // allreduce
      size_t{16} << 10,   // reduce_scatter
      size_t{1} << 20,    // allgather (and the barrier)
      size_t{1} << 20,    // broadcast
  };

  size_t doubling_max(CollectiveKind kind) const {
    return doubling_max_bytes[static_cast<size_t>(kind)];
  }
  // Whether some call can run recursive doubling (its links are then opened).
  bool may_use_doubling() const;
  // "ring", "ring+doubling": the links this policy opens, for reports.
  const char* link_graph_name() const;
  // Every call on the ring: only the ring's links.
  static AlgorithmPolicy ring_only();
};

// TRAINMOVER_ALGO: "auto" (or empty), "ring" or "doubling".
Result<AlgorithmPolicy::Force> parse_algorithm_force(std::string_view text);
// TRAINMOVER_ALGO_THRESHOLDS: comma-separated entries, applied in order over
// the defaults: "doubling:SIZE" sets every collective, "OP:doubling:SIZE"
// one (OP: allreduce, reduce_scatter, allgather, broadcast); SIZE as 64K,
// 1M, 0.
Result<DoublingThresholds> parse_algorithm_thresholds(std::string_view text);

// The algorithm of a call of `kind` over `nslots` slots whose larger buffer
// (allgather: the output) has `bytes` bytes.
Algorithm choose_algorithm(const AlgorithmPolicy& policy, CollectiveKind kind, size_t bytes,
                           int nslots);

// The slot pairs (lower, higher), sorted and unique, that the policy's
// algorithms exchange over among `nslots` slots.
std::vector<std::pair<int, int>> algorithm_pairs(const AlgorithmPolicy& policy, int nslots);

}  // namespace trainmover
