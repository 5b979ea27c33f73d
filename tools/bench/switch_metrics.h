// The figures of one round of `trainmover-bench switch`, from the driver's
// t0 and the processes' timestamps (all on one monotonic clock). What each
// key means is documented in trainmover-bench(1); in short, for N slots,
// victim v and standby (who = N):
//   switchover_s        max over the processes that open links (delta: the
//                       standby and v's two ring neighbours; rebuild: every
//                       process but the leaver) of ready - t0
//   switchover_all_s    the same over every live process (the leaver's
//                       ready too, in the planned mode)
//   first_collective_s  max over the processes of the new ring of first - t0
//   detection_s         unexpected: max over v's neighbours of detect - t0
//   detection_all_s     unexpected: the same over every survivor
//   join_connect_s      on the standby: linked - view
//   switch_local_s      max over the openers of ready - woke (planned) or
//                       ready - view (unexpected): the switch as the
//                       process itself sees it
//   switch_cpu_s        max over the openers of the CPU time their threads
//                       used over the same span (the work, without waits)
//   prepare_s           planned delta: max over the delta of prepared - the
//                       view's publication (phase 1, before t0)
//   links_opened        the sum over the live processes of the links each
//   links_closed        opened / closed from its ring being up to its links
//                       ready after the switch, as its communicator counted
//                       them (comm/link_counters.h): a link between two
//                       reporting processes counts twice; a killed leaver
//                       reports nothing
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "switch_round.h"

namespace trainmover::bench {

using SwitchMetrics = std::map<std::string, double>;

// The victim's ring neighbours (one when N = 2).
std::vector<int> ring_neighbours(int nranks, int victim);

// Fails naming the process and the timestamp when one is missing.
Result<SwitchMetrics> compute_switch_metrics(const SwitchRoundPlan& plan,
                                             const SwitchRecord& record);

// Every process's timestamps relative to t0, in ms, one line each, on stderr.
void print_switch_trace(const SwitchRoundPlan& plan, const SwitchRecord& record);

}  // namespace trainmover::bench
