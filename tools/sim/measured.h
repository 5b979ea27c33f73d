// Downtimes measured by `trainmover-bench switch --json`, one JSON object per
// line; the keys used are mode, impl, nranks, switchover_s and
// first_collective_s (others are ignored). Only impl "delta" rows are used
// (that is TrainMover).
#pragma once

#include <istream>
#include <string>

#include "common/status.h"
#include "log_scaling.h"

namespace trainmover::sim {

struct MeasuredDowntimes {
  LogLinear planned;
  LogLinear unexpected;
};

// Maps the rows of one mode to a downtime per event at any scale:
//  - the downtime of a row is switchover_s + first_collective_s (the job is
//    paused until its first collective completes on the new membership);
//  - rows with the same nranks are combined by their median;
//  - the anchor is the largest nranks measured;
//  - with two or more nranks, the growth per doubling is taken from the two
//    largest (never below zero); with one, `fallback_growth` is used.
// Fails, naming the line, on malformed input or when a mode has no delta rows.
Result<MeasuredDowntimes> read_measured_downtimes(std::istream& in, double planned_fallback_growth,
                                                  double unexpected_fallback_growth);

// As above, for a file; fails naming it, also when it cannot be opened.
Result<MeasuredDowntimes> read_measured_downtimes_file(const std::string& path,
                                                       double planned_fallback_growth,
                                                       double unexpected_fallback_growth);

}  // namespace trainmover::sim
