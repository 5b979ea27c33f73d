// `trainmover-sim --closed-form`: simulates checkpoint-restart in the simple
// setting the closed forms describe and prints both next to the simulation.
#pragma once

#include <ostream>
#include <span>
#include <vector>

#include "projection.h"

namespace trainmover::sim {

struct ClosedFormCheckRow {
  double gpus = 0;
  double mttf_s = 0;
  double interval_s = 0;  // Young's interval
  double save_s = 0;
  double restart_s = 0;  // restart plus infrastructure cost
  Summary summary;
  double first_order = 0;
  double renewal = 0;
};

// Runs checkpoint-restart at every scale of `config` with unexpected failures
// only: maintenance, rebalancing and stragglers are switched off here.
// Fails as CheckRunSize does.
Result<std::vector<ClosedFormCheckRow>> check_closed_form(const ProjectionConfig& config);

void write_closed_form_check(std::ostream& out, std::span<const ClosedFormCheckRow> rows);

}  // namespace trainmover::sim
