// Downtimes measured by `trainmover-bench switch --json` or `trainmover-bench
// recovery --json` (both may be in one file), one JSON object per line.
// switch rows: the keys used are mode, impl, nranks, switchover_s and
// first_collective_s (others are ignored); only impl "delta" rows are used
// (that is TrainMover). recovery rows (impl trainmover, stop-restart or
// cold-standby; no mode): only impl "trainmover", whose downtime_s is an
// unexpected failure's downtime. Without planned rows, planned migrations
// are charged the unexpected line (a migration never costs more).
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
//  - the downtime of a switch row is switchover_s + first_collective_s (the
//    job is paused until its first collective completes on the new
//    membership); of a recovery row, downtime_s;
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
