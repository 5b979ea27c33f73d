// Results of `trainmover-bench switch`: the median over rounds of every
// figure per (mode, implementation, N), printed as a table with the goals of
// the switch, or as JSON lines.
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "switch_metrics.h"
#include "switch_options.h"

namespace trainmover::bench {

class SwitchReport {
 public:
  explicit SwitchReport(const SwitchOptions& options) : options_(options) {}

  void add_round(SwitchMode mode, SwitchImpl impl, int nranks, const SwitchMetrics& metrics);
  // The median over rounds of `key`; NaN when not measured.
  double median(SwitchMode mode, SwitchImpl impl, int nranks, const std::string& key) const;
  void print_json() const;
  void print_table() const;

 private:
  using Cell = std::tuple<SwitchMode, SwitchImpl, int>;
  bool has(SwitchMode mode, SwitchImpl impl, int nranks) const {
    return rounds_.count({mode, impl, nranks}) != 0;
  }
  void print_goals(SwitchMode mode) const;

  const SwitchOptions& options_;
  std::map<Cell, std::vector<SwitchMetrics>> rounds_;
};

}  // namespace trainmover::bench
