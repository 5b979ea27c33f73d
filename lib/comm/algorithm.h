// Which algorithm runs a collective, and the links the algorithms need.
//
// Every slot must run the same algorithm for a call, so the choice depends
// only on the call (its size in bytes and N) and on the communicator's
// policy, which every process of a job reads from the same TRAINMOVER_ALGO
// and TRAINMOVER_ALGO_THRESHOLDS (trainmover(7)).
//
// Three algorithms: the pipelined ring (comm/ring_plan.h), bandwidth-optimal,
// for large buffers; recursive doubling (comm/doubling_plan.h), about
// log2 N dependent steps, for small ones; and, for the allreduce between
// the two, recursive halving and doubling (comm/halving_plan.h), 2 log2 N
// steps that move what the ring moves, and its first half for the
// reduce_scatter. Allreduce, allgather (and so the barrier) and broadcast
// have the ring and recursive doubling; a small reduce_scatter is recursive
// doubling's allreduce, of which each slot keeps its block.
//
// Links: a communicator whose policy can choose recursive doubling or
// halving links every pair of slots the algorithms exchange over (the ring's
// neighbours and the doubling partners, which halving shares: at most
// log2(N) + 3 links a slot), at start-up and in every switch, so that no
// call connects anything and a switch still changes only the links that
// touch the replaced slot.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainmover {

enum class Algorithm { kRing, kDoubling, kHalving };
enum class CollectiveKind { kAllreduce, kReduceScatter, kAllgather, kBroadcast };

const char* algorithm_name(Algorithm algorithm);

inline constexpr size_t kCollectiveKinds = 4;
const char* collective_kind_name(CollectiveKind kind);

// Per collective (index: CollectiveKind), the largest call, in bytes of its
// larger buffer, that runs recursive doubling (0: never).
using DoublingThresholds = std::array<size_t, kCollectiveKinds>;
// Per collective, the largest call above its doubling threshold that runs
// recursive halving (0: never; allgather and broadcast have none).
using HalvingThresholds = std::array<size_t, kCollectiveKinds>;

struct AlgorithmPolicy {
  enum class Force { kNone, kRing, kDoubling, kHalving };
  // TRAINMOVER_ALGO: auto, ring, doubling, halving (halving: allreduce and
  // reduce_scatter; allgather and broadcast then choose by size).
  Force force = Force::kNone;
  // TRAINMOVER_ALGO_THRESHOLDS. The defaults are where the algorithms
  // crossed on 4 ranks of this project's reference host, capped at 1 MiB
  // for allgather and broadcast, where recursive doubling still won there
  // but moves more than the ring at larger N (docs/collectives.md); the
  // allreduce's where recursive halving caught up with doubling.
  DoublingThresholds doubling_max_bytes = kDefaultDoublingMaxBytes;
  // Recursive halving, allreduce: on 4 ranks here it beat the ring from
  // 512 KiB to 16 MiB over TCP (tied at 64 MiB) and to 4 MiB over shared
  // memory (5-15% behind at 16 and 32 MiB); the choice cannot depend on the
  // transport, as a communicator may mix them. Above, the ring, whose
  // traffic does not grow when N is no power of two. reduce_scatter: from
  // its doubling threshold to 256 KiB, where it beat the ring on 4 ranks
  // over TCP and shared memory alike (2026-12-07; to 1 MiB over TCP, tied
  // there over shared memory; docs/collectives.md).
  HalvingThresholds halving_max_bytes = kDefaultHalvingMaxBytes;

  static constexpr DoublingThresholds kDefaultDoublingMaxBytes = {
      size_t{256} << 10,  // allreduce
      size_t{16} << 10,   // reduce_scatter
      size_t{1} << 20,    // allgather (and the barrier)
      size_t{1} << 20,    // broadcast
  };

  static constexpr HalvingThresholds kDefaultHalvingMaxBytes = {
      size_t{16} << 20,   // allreduce
      size_t{256} << 10,  // reduce_scatter
      0,                  // allgather: none
      0,                  // broadcast: none
  };

  size_t doubling_max(CollectiveKind kind) const {
    return doubling_max_bytes[static_cast<size_t>(kind)];
  }
  size_t halving_max(CollectiveKind kind) const {
    return halving_max_bytes[static_cast<size_t>(kind)];
  }
  // Whether some call can run recursive doubling or halving (their links
  // are then opened).
  bool may_use_doubling() const;
  // "ring", "ring+doubling": the links this policy opens, for reports.
  const char* link_graph_name() const;
  // Every call on the ring: only the ring's links.
  static AlgorithmPolicy ring_only();
};

// TRAINMOVER_ALGO: "auto" (or empty), "ring", "doubling" or "halving".
Result<AlgorithmPolicy::Force> parse_algorithm_force(std::string_view text);

struct AlgorithmThresholds {
  DoublingThresholds doubling_max_bytes = AlgorithmPolicy::kDefaultDoublingMaxBytes;
  HalvingThresholds halving_max_bytes = AlgorithmPolicy::kDefaultHalvingMaxBytes;
  bool operator==(const AlgorithmThresholds&) const = default;
};
// TRAINMOVER_ALGO_THRESHOLDS: comma-separated entries, applied in order over
// the defaults: "doubling:SIZE" sets every collective, "OP:doubling:SIZE"
// one (OP: allreduce, reduce_scatter, allgather, broadcast);
// "halving:SIZE" the halving threshold of allreduce and reduce_scatter,
// "OP:halving:SIZE" one of them. SIZE as 64K, 1M, 0.
Result<AlgorithmThresholds> parse_algorithm_thresholds(std::string_view text);

// The algorithm of a call of `kind` over `nslots` slots whose larger buffer
// (allgather: the output) has `bytes` bytes: recursive doubling up to its
// threshold, then (allreduce, reduce_scatter) recursive halving up to its
// own, then the ring.
Algorithm choose_algorithm(const AlgorithmPolicy& policy, CollectiveKind kind, size_t bytes,
                           int nslots);

// The slot pairs (lower, higher), sorted and unique, that the policy's
// algorithms exchange over among `nslots` slots.
std::vector<std::pair<int, int>> algorithm_pairs(const AlgorithmPolicy& policy, int nslots);

}  // namespace trainmover
