// Results of `trainmover-bench allreduce` and the other collectives: the
// median over rounds per (implementation, size), printed as a table or as
// JSON lines.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collective_options.h"
#include "comm/algorithm.h"

namespace trainmover::bench {

class CollectiveReport {
 public:
  // `policy`: the one the trainmover ranks run with (they inherit this
  // process's TRAINMOVER_ALGO*), to name the algorithm of each size.
  CollectiveReport(const CollectiveOptions& options, std::vector<SizePlan> plan,
                   const AlgorithmPolicy& policy)
      : options_(options), plan_(std::move(plan)), policy_(policy) {}

  // One round's time per iteration, for each size of the plan.
  void add_round(const std::string& impl, const std::vector<double>& times);
  // This host's memcpy bandwidth, printed as the bound of shared memory.
  void set_memcpy_gbps(double gbps) { memcpy_gbps_ = gbps; }
  void print_json() const;
  void print_table() const;

  // Median over rounds; 0 when the implementation has no result.
  double median_time(const std::string& impl, size_t size_index) const;
  // Each round's time, in round order (an implementation dropped after a
  // failure has fewer: its rounds are the first ones).
  std::vector<double> round_times(const std::string& impl, size_t size_index) const;
  // busbw in GB/s (nccl-tests): the bytes the call moves (collective.h) times
  // the collective's factor, over the time.
  double busbw(uint64_t bytes, double time_s) const;

 private:
  // The impls with results, in the order asked for.
  std::vector<std::string> measured_impls() const;
  double ratio(const std::string& other, size_t size_index) const;
  // The same ratio within each round both ran: the pairs measured closest
  // in time, so how the ratio moves across rounds shows the host's noise.
  std::vector<double> round_ratios(const std::string& other, size_t size_index) const;
  const char* trainmover_algorithm(size_t size_index) const;

  double memcpy_gbps_ = 0;  // 0: not measured
  const CollectiveOptions& options_;
  std::vector<SizePlan> plan_;
  AlgorithmPolicy policy_;
  std::map<std::string, std::vector<std::vector<double>>> rounds_;  // impl -> rounds -> per size
};

}  // namespace trainmover::bench
