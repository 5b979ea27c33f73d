// The commands of trainmover-ctl, each over one connection to the job's
// coordinator. Each prints to `out` and returns the process's exit status:
// 0 done, 1 the coordinator refused or could not be reached.
#pragma once

#include <iosfwd>
#include <string>

#include "common/clock.h"
#include "control/control_client.h"

namespace trainmover::ctl {

int run_status(control::ControlClient& client, Duration timeout, bool json, std::ostream& out);
int run_migrate(control::ControlClient& client, Duration timeout, int slot, std::ostream& out);
int run_events(control::ControlClient& client, Duration timeout, bool follow, std::ostream& out);

// Prints the status object as a table (slots, standbys, epoch, step).
void print_status(const nlohmann::json& status, std::ostream& out);

}  // namespace trainmover::ctl
