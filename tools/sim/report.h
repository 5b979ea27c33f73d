// Text output of a projection: a table for people, JSON lines for programs.
#pragma once

#include <ostream>
#include <span>

#include "projection.h"

namespace trainmover::sim {

void write_table(std::ostream& out, std::span<const ProjectionRow> rows, double weeks);

// One object per line with gpus, policy, ettr, wasted_gpu_hours_per_week and
// interruptions, plus the interval, MTTF, standbys and cost behind them.
void write_json_lines(std::ostream& out, std::span<const ProjectionRow> rows, double weeks);

// The downtime model each policy resolves to at each scale, before any
// simulation: what one event of each kind costs (infrastructure cost excluded).
// Fails, having written nothing, when a policy cannot be resolved.
Status write_models(std::ostream& out, const ProjectionConfig& config);

}  // namespace trainmover::sim
