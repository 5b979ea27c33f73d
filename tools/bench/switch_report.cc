#include "switch_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/json.h"
#include "common/median.h"
#include "common/str.h"

namespace trainmover::bench {
namespace {

// Figures beyond the main three, in output order.
constexpr const char* kExtraKeys[] = {"switchover_all_s", "switch_local_s",  "switch_cpu_s",
                                      "detection_s",      "detection_all_s", "join_connect_s",
                                      "prepare_s"};

// Goals of the switch on one host (trainmover-bench(1)).
constexpr double kFlatnessGoal = 1.2;    // delta switchover_s, largest N over smallest
constexpr double kSpeedupGoal = 10;      // rebuild over delta switchover_s, at the largest N
constexpr double kDetectionGoalS = 1.0;  // unexpected detection_s, every N

void print_ms(double seconds) {
  if (std::isnan(seconds)) {
    std::printf(" %11s", "-");
  } else {
    std::printf(" %11.3f", seconds * 1e3);
  }
}

const char* verdict(bool met) { return met ? "met" : "NOT met"; }

// A median of counts: an integer when it is one (the rounds agree).
Json count_value(double median) {
  if (std::isfinite(median) && median == std::floor(median)) return static_cast<int64_t>(median);
  return median;
}

}  // namespace

void SwitchReport::add_round(SwitchMode mode, SwitchImpl impl, int nranks,
                             const SwitchMetrics& metrics) {
  rounds_[{mode, impl, nranks}].push_back(metrics);
}

double SwitchReport::median(SwitchMode mode, SwitchImpl impl, int nranks,
                            const std::string& key) const {
  auto it = rounds_.find({mode, impl, nranks});
  std::vector<double> values;
  if (it != rounds_.end()) {
    for (const SwitchMetrics& m : it->second) {
      if (auto v = m.find(key); v != m.end()) values.push_back(v->second);
    }
  }
  return trainmover::median(std::move(values));
}

void SwitchReport::print_json() const {
  for (const auto& [cell, rounds] : rounds_) {
    auto [mode, impl, n] = cell;
    Json line = {{"mode", mode_name(mode)},
                 {"impl", impl_name(impl)},
                 {"nranks", n},
                 {"links_of", options_.link_graph},
                 {"links_opened", count_value(median(mode, impl, n, "links_opened"))},
                 {"links_closed", count_value(median(mode, impl, n, "links_closed"))},
                 {"switchover_s", median(mode, impl, n, "switchover_s")},
                 {"first_collective_s", median(mode, impl, n, "first_collective_s")}};
    for (const char* key : kExtraKeys) {
      double v = median(mode, impl, n, key);
      if (!std::isnan(v)) line[key] = v;
    }
    line["victim"] = options_.victim_for(n);
    line["bytes"] = options_.bytes;
    line["rounds"] = rounds.size();
    std::printf("%s\n", json_line(line).c_str());
  }
  std::fflush(stdout);
}

void SwitchReport::print_goals(SwitchMode mode) const {
  const int lo = *std::min_element(options_.nranks.begin(), options_.nranks.end());
  const int hi = *std::max_element(options_.nranks.begin(), options_.nranks.end());
  double delta_lo = median(mode, SwitchImpl::kDelta, lo, "switchover_s");
  double delta_hi = median(mode, SwitchImpl::kDelta, hi, "switchover_s");
  double rebuild_hi = median(mode, SwitchImpl::kRebuild, hi, "switchover_s");
  if (lo != hi && !std::isnan(delta_lo) && !std::isnan(delta_hi)) {
    double flat = delta_hi / delta_lo;
    std::printf("# %s: delta switchover_s N=%d / N=%d = %.2f (goal <= %.1f): %s\n", mode_name(mode),
                hi, lo, flat, kFlatnessGoal, verdict(flat <= kFlatnessGoal));
  }
  if (!std::isnan(delta_hi) && !std::isnan(rebuild_hi)) {
    double speedup = rebuild_hi / delta_hi;
    std::printf("# %s: rebuild / delta switchover_s at N=%d = %.1f (goal >= %.0f): %s\n",
                mode_name(mode), hi, speedup, kSpeedupGoal, verdict(speedup >= kSpeedupGoal));
  }
  if (mode != SwitchMode::kUnexpected) return;
  double worst = 0;
  for (int n : options_.nranks) {
    double d = median(mode, SwitchImpl::kDelta, n, "detection_s");
    if (!std::isnan(d)) worst = std::max(worst, d);
  }
  std::printf("# %s: detection_s, worst N = %.3f s (goal < %.0f s): %s\n", mode_name(mode), worst,
              kDetectionGoalS, verdict(worst < kDetectionGoalS));
}

void SwitchReport::print_table() const {
  std::printf(
      "# switch: one slot's process replaced by a standby; median of %d rounds; ms after t0; "
      "links of %s\n",
      options_.rounds, options_.link_graph.c_str());
  std::printf("%-10s %-7s %3s %11s %11s %11s %11s %11s %11s %11s %11s %11s\n", "mode", "impl", "N",
              "links o/c", "switchover", "switch_all", "local", "cpu", "first_coll", "detection",
              "join_conn", "prepare");
  for (const auto& [cell, rounds] : rounds_) {
    auto [mode, impl, n] = cell;
    const std::string links =
        str_cat(median(mode, impl, n, "links_opened"), "/", median(mode, impl, n, "links_closed"));
    std::printf("%-10s %-7s %3d %11s", mode_name(mode), impl_name(impl), n, links.c_str());
    for (const char* key : {"switchover_s", "switchover_all_s", "switch_local_s", "switch_cpu_s",
                            "first_collective_s", "detection_s", "join_connect_s", "prepare_s"}) {
      print_ms(median(mode, impl, n, key));
    }
    std::printf("\n");
  }
  for (SwitchMode mode : options_.modes) print_goals(mode);
  std::fflush(stdout);
}

}  // namespace trainmover::bench
