#include "comm/algorithm.h"

#include <algorithm>
#include <optional>
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
    case Algorithm::kHalving:
      return "halving";
  }
  return "?";
}

AlgorithmPolicy AlgorithmPolicy::ring_only() {
  AlgorithmPolicy policy;
  policy.force = Force::kRing;
  return policy;
}

const char* collective_kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllreduce:
      return "allreduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllgather:
      return "allgather";
    case CollectiveKind::kBroadcast:
      return "broadcast";
  }
  return "?";
}

bool AlgorithmPolicy::may_use_doubling() const {
  if (force == Force::kRing) return false;
  auto any = [](const auto& maxima) {
    return std::any_of(maxima.begin(), maxima.end(), [](size_t max) { return max > 0; });
  };
  return force != Force::kNone || any(halving_max_bytes) || any(doubling_max_bytes);
}

const char* AlgorithmPolicy::link_graph_name() const {
  return may_use_doubling() ? "ring+doubling" : "ring";
}

Result<AlgorithmPolicy::Force> parse_algorithm_force(std::string_view text) {
  if (text.empty() || text == "auto") return AlgorithmPolicy::Force::kNone;
  if (text == "ring") return AlgorithmPolicy::Force::kRing;
  if (text == "doubling") return AlgorithmPolicy::Force::kDoubling;
  if (text == "halving") return AlgorithmPolicy::Force::kHalving;
  return error(TM_ERROR_INVALID_ARGUMENT, "unknown algorithm '", text,
               "' (known: auto, ring, doubling, halving)");
}

namespace {

constexpr std::string_view kThresholdsSyntax =
    "[OP:]doubling:SIZE or [OP:]halving:SIZE[,...] (OP: allreduce, reduce_scatter, allgather, "
    "broadcast; halving: allreduce and reduce_scatter only; SIZE: the largest call, in bytes of "
    "its larger buffer, that runs that algorithm)";

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool has_halving(size_t kind) {
  return kind == static_cast<size_t>(CollectiveKind::kAllreduce) ||
         kind == static_cast<size_t>(CollectiveKind::kReduceScatter);
}

// Applies one entry, "[OP:]doubling:SIZE" or "[OP:]halving:SIZE", to `out`.
Status apply_threshold(std::string_view entry, AlgorithmThresholds& out) {
  constexpr std::string_view kDoubling = "doubling:";
  constexpr std::string_view kHalving = "halving:";
  std::optional<size_t> only;
  std::string_view rest = entry;
  if (!starts_with(rest, kDoubling) && !starts_with(rest, kHalving)) {
    size_t colon = rest.find(':');
    for (size_t k = 0; k < kCollectiveKinds; ++k) {
      if (rest.substr(0, colon) == collective_kind_name(static_cast<CollectiveKind>(k))) only = k;
    }
    if (only) rest = rest.substr(colon + 1);
  }
  const bool halving = starts_with(rest, kHalving);
  if ((!halving && !starts_with(rest, kDoubling)) || (halving && only && !has_halving(*only)))
    return error(TM_ERROR_INVALID_ARGUMENT, "'", entry, "' is not ", kThresholdsSyntax);
  auto size = parse_size(rest.substr(halving ? kHalving.size() : kDoubling.size()));
  if (!size.ok()) return size.status().with_context(str_cat("'", entry, "'"));
  for (size_t k = 0; k < kCollectiveKinds; ++k) {
    if (only && k != *only) continue;
    if (!halving) {
      out.doubling_max_bytes[k] = size.value();
    } else if (has_halving(k)) {
      out.halving_max_bytes[k] = size.value();
    }
  }
  return Status::Ok();
}

}  // namespace

Result<AlgorithmThresholds> parse_algorithm_thresholds(std::string_view text) {
  AlgorithmThresholds out;
  if (text.empty())
    return error(TM_ERROR_INVALID_ARGUMENT, "an empty threshold list is not ", kThresholdsSyntax);
  for (std::string_view entry : split(text, ',')) TM_RETURN_IF_ERROR(apply_threshold(entry, out));
  return out;
}

Algorithm choose_algorithm(const AlgorithmPolicy& policy, CollectiveKind kind, size_t bytes,
                           int nslots) {
  if (nslots < 2) return Algorithm::kRing;  // nothing to exchange: a local copy either way
  switch (policy.force) {
    case AlgorithmPolicy::Force::kRing:
      return Algorithm::kRing;
    case AlgorithmPolicy::Force::kDoubling:
      return Algorithm::kDoubling;
    case AlgorithmPolicy::Force::kHalving:
      if (has_halving(static_cast<size_t>(kind))) return Algorithm::kHalving;
      break;
    case AlgorithmPolicy::Force::kNone:
      break;
  }
  const size_t max = policy.doubling_max(kind);
  if (max > 0 && bytes <= max) return Algorithm::kDoubling;
  const size_t halving_max = policy.halving_max(kind);
  return halving_max > 0 && bytes <= halving_max ? Algorithm::kHalving : Algorithm::kRing;
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
