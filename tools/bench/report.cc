#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/json.h"
#include "common/median.h"

namespace trainmover::bench {
namespace {

// The peers trainmover is compared with: JSON key and table column.
struct Peer {
  const char* impl;
  const char* key;
  const char* column;
};
constexpr Peer kPeers[] = {{kImplGloo, "vs_gloo", "tm/gloo"},
                           {kImplOpenmpiTcp, "vs_openmpi_tcp", "tm/ompi"},
                           {kImplOpenmpiShm, "vs_openmpi_shm", "tm/ompi-shm"}};

// The peer's time over trainmover's: trainmover's busbw over the peer's.
// NaN when a time is 0 (no result).
double time_ratio(double tm, double peer) {
  if (tm <= 0 || peer <= 0) return std::numeric_limits<double>::quiet_NaN();
  return peer / tm;
}

void print_ratio(double r) {
  if (std::isnan(r)) {
    std::printf(" %8s", "-");
  } else {
    std::printf(" %8.2f", r);
  }
}

}  // namespace

void CollectiveReport::add_round(const std::string& impl, const std::vector<double>& times) {
  rounds_[impl].push_back(times);
}

std::vector<double> CollectiveReport::round_times(const std::string& impl,
                                                  size_t size_index) const {
  std::vector<double> values;
  auto it = rounds_.find(impl);
  if (it == rounds_.end()) return values;
  for (const auto& round : it->second) values.push_back(round[size_index]);
  return values;
}

double CollectiveReport::median_time(const std::string& impl, size_t size_index) const {
  std::vector<double> values = round_times(impl, size_index);
  return values.empty() ? 0 : median(values);
}

double CollectiveReport::busbw(uint64_t bytes, double time_s) const {
  if (time_s <= 0) return 0;
  double moved =
      static_cast<double>(collective_shape(options_.op, bytes, options_.nranks).moved_bytes);
  return moved * busbw_factor(options_.op, options_.nranks) / time_s / 1e9;
}

std::vector<std::string> CollectiveReport::measured_impls() const {
  std::vector<std::string> out;
  for (const auto& impl : options_.impls) {
    if (rounds_.count(impl) != 0) out.push_back(impl);
  }
  return out;
}

// trainmover's busbw over `other`'s (> 1: trainmover faster), computed as
// the inverse ratio of times, which is the same for N > 1 and still defined
// for N = 1 (busbw 0). NaN (JSON null, "-" in the table) when a time is 0.
double CollectiveReport::ratio(const std::string& other, size_t i) const {
  return time_ratio(median_time(kImplTrainmover, i), median_time(other, i));
}

std::vector<double> CollectiveReport::round_ratios(const std::string& other, size_t i) const {
  const std::vector<double> tm = round_times(kImplTrainmover, i);
  const std::vector<double> peer = round_times(other, i);
  std::vector<double> out;
  for (size_t r = 0; r < std::min(tm.size(), peer.size()); ++r)
    out.push_back(time_ratio(tm[r], peer[r]));
  return out;
}

const char* CollectiveReport::trainmover_algorithm(size_t i) const {
  CollectiveKind kind = CollectiveKind::kAllreduce;
  switch (options_.op) {
    case Collective::kAllreduce:
      kind = CollectiveKind::kAllreduce;
      break;
    case Collective::kReduceScatter:
      kind = CollectiveKind::kReduceScatter;
      break;
    case Collective::kAllgather:
      kind = CollectiveKind::kAllgather;
      break;
    case Collective::kBroadcast:
      kind = CollectiveKind::kBroadcast;
      break;
  }
  return algorithm_name(choose_algorithm(policy_, kind, plan_[i].bytes, options_.nranks));
}

void CollectiveReport::print_json() const {
  for (size_t i = 0; i < plan_.size(); ++i) {
    for (const std::string& impl : measured_impls()) {
      double t = median_time(impl, i);
      Json line = {{"impl", impl},
                   {"op", collective_name(options_.op)},
                   {"nranks", options_.nranks},
                   {"bytes", plan_[i].bytes},
                   {"iters", plan_[i].iters},
                   {"rounds", rounds_.at(impl).size()},
                   {"time_s", t},
                   {"round_times_s", round_times(impl, i)},
                   {"busbw_GBps", busbw(plan_[i].bytes, t)}};
      if (memcpy_gbps_ > 0) line["host_memcpy_GBps"] = memcpy_gbps_;
      if (impl == kImplTrainmover) {
        line["algorithm"] = trainmover_algorithm(i);
        line["transport"] = options_.transport;
        for (const Peer& peer : kPeers) {
          if (rounds_.count(peer.impl) == 0) continue;
          line[peer.key] = ratio(peer.impl, i);
          line[std::string(peer.key) + "_rounds"] = round_ratios(peer.impl, i);
        }
      }
      std::printf("%s\n", json_line(line).c_str());
    }
  }
  std::fflush(stdout);
}

void CollectiveReport::print_table() const {
  auto impls = measured_impls();
  std::printf(
      "# %s float32%s, %d ranks, median of %d rounds; time per iteration, busbw in GB/s;"
      " trainmover transport %s\n",
      collective_name(options_.op),
      options_.op == Collective::kAllreduce || options_.op == Collective::kReduceScatter ? " sum"
                                                                                         : "",
      options_.nranks, options_.rounds, options_.transport.c_str());
  std::printf("%10s %6s", "bytes", "iters");
  for (const auto& impl : impls) std::printf(" %14s %8s", (impl + " us").c_str(), "busbw");
  std::vector<const Peer*> compared;
  for (const Peer& peer : kPeers) {
    if (rounds_.count(kImplTrainmover) != 0 && rounds_.count(peer.impl) != 0)
      compared.push_back(&peer);
  }
  for (const Peer* peer : compared) std::printf(" %8s", peer->column);
  const bool tm = rounds_.count(kImplTrainmover) != 0;
  if (tm) std::printf("  %s", "tm algorithm");
  std::printf("\n");
  for (size_t i = 0; i < plan_.size(); ++i) {
    std::printf("%10llu %6d", static_cast<unsigned long long>(plan_[i].bytes), plan_[i].iters);
    for (const auto& impl : impls) {
      double t = median_time(impl, i);
      std::printf(" %14.1f %8.3f", t * 1e6, busbw(plan_[i].bytes, t));
    }
    for (const Peer* peer : compared) print_ratio(ratio(peer->impl, i));
    if (tm) std::printf("  %s", trainmover_algorithm(i));
    std::printf("\n");
  }
  std::printf("# tm/X: busbw of trainmover over that of X (> 1: trainmover faster)\n");
  if (memcpy_gbps_ > 0) {
    std::printf("# this host's memcpy: %.2f GB/s on one core (shared memory copies twice)\n",
                memcpy_gbps_);
  }
  std::fflush(stdout);
}

}  // namespace trainmover::bench
