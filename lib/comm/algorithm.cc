#include "comm/algorithm.h"

#include <algorithm>
#include <set>

#include "comm/doubling_plan.h"
#include "common/parse.h"
#include "common/str.h"

namespace trainmover {

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kDoubling:
      return "doubling";
  }
  return "?";
}

AlgorithmPolicy AlgorithmPolicy::ring_only() {
  AlgorithmPolicy policy;
  policy.force = Force::kRing;
  return policy;
}

bool AlgorithmPolicy::may_use_doubling() const {
  if (force == Force::kRing) return false;
  return force == Force::kDoubling || doubling_max_bytes > 0;
}

const char* AlgorithmPolicy::link_graph_name() const {
  return may_use_doubling() ? "ring+doubling" : "ring";
}

Result<AlgorithmPolicy::Force> parse_algorithm_force(std::string_view text) {
  if (text.empty() || text == "auto") return AlgorithmPolicy::Force::kNone;
  if (text == "ring") return AlgorithmPolicy::Force::kRing;
  if (text == "doubling") return AlgorithmPolicy::Force::kDoubling;
  return error(TM_ERROR_INVALID_ARGUMENT, "unknown algorithm '", text,
               "' (known: auto, ring, doubling)");
}

Result<size_t> parse_algorithm_thresholds(std::string_view text) {
  constexpr std::string_view kDoubling = "doubling:";
  if (text.substr(0, kDoubling.size()) != kDoubling) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text,
                 "' is not doubling:SIZE (the largest allreduce, in bytes, that runs recursive "
                 "doubling)");
  }
  auto size = parse_size(text.substr(kDoubling.size()));
  if (!size.ok()) return size.status().with_context(str_cat("'", text, "'"));
  return size.value();
}

Algorithm choose_algorithm(const AlgorithmPolicy& policy, CollectiveKind /*kind*/, size_t bytes,
                           int nslots) {
  if (nslots < 2) return Algorithm::kRing;  // nothing to exchange: a local copy either way
  switch (policy.force) {
    case AlgorithmPolicy::Force::kRing:
      return Algorithm::kRing;
    case AlgorithmPolicy::Force::kDoubling:
      return Algorithm::kDoubling;
    case AlgorithmPolicy::Force::kNone:
      break;
  }
  bool small = policy.doubling_max_bytes > 0 && bytes <= policy.doubling_max_bytes;
  return small ? Algorithm::kDoubling : Algorithm::kRing;
}

std::vector<std::pair<int, int>> algorithm_pairs(const AlgorithmPolicy& policy, int nslots) {
  std::set<std::pair<int, int>> pairs;
  for (int s = 0; nslots > 1 && s < nslots; ++s) {
    int next = (s + 1) % nslots;
    if (next != s) pairs.insert({std::min(s, next), std::max(s, next)});
  }
  if (policy.may_use_doubling()) {
    for (auto pair : doubling_pairs(nslots)) pairs.insert(pair);
  }
  return {pairs.begin(), pairs.end()};
}

}  // namespace trainmover
