// EventPrinter: a coordinator's events as lines a person reads, on stderr,
// each behind a prefix ("trainmover-launch", "trainmover" in srun), and the
// counts a summary needs. Shared by the local launcher and the srun side.
//
// Threading: print() and totals() may be called from any thread; a line is
// written whole.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace trainmover::launcher {

struct EventTotals {
  int failures = 0;       // slots that failed
  int recoveries = 0;     // recoveries completed
  double downtime_s = 0;  // summed over the recoveries
};

class EventPrinter {
 public:
  explicit EventPrinter(std::string prefix) : prefix_(std::move(prefix)) {}
  // Prints the line of an event that has one; counts failures and recoveries.
  void print(const nlohmann::json& e);
  EventTotals totals() const;

 private:
  // The line for `e`, "" for an event not worth a line.
  std::string describe(const nlohmann::json& e);

  const std::string prefix_;
  mutable std::mutex mutex_;
  EventTotals totals_;
};

}  // namespace trainmover::launcher
