// Helpers that the worker's parts (worker.cc: steps, standbys, first
// step; worker_orders.cc: the coordinator's orders) share. Internal to
// lib/worker.
#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "trainmover/trainmover.h"
#include "worker/worker.h"

namespace trainmover::worker {

// How long a rank in recovery waits for the coordinator's next order; the
// coordinator's own order deadlines (10 s, 60 s for a transfer) are shorter,
// so this only ends a recovery whose coordinator went silent.
inline constexpr auto kOrderWait = std::chrono::seconds(120);
inline constexpr auto kStoreWait = std::chrono::seconds(30);

// CPU seconds (user + system) and minor page faults of the whole process:
// a joiner's first step runs on the training thread and on its
// communicators' progress threads; an order's work on any of them.
struct ProcessUsage {
  double cpu_s = 0;
  uint64_t minflt = 0;
};
ProcessUsage process_usage();
inline double process_cpu_seconds() { return process_usage().cpu_s; }

// A C API result as a Status, with the API's last error message.
Status api_status(tm_result_t rc, const std::string& what);

// The index of job slot `slot` among a communicator's slots, -1 if absent.
int comm_slot_of(const WorkerComm& c, int slot);

// The index in `comms` of the registered communicator that `c` is a group
// split from, or -1: the delta switch of that parent carries the group
// (Communicator::prepare_groups and the rest), so the worker drives only
// the parent.
int parent_index(const WorkerComm& c, const std::vector<WorkerComm>& comms);
bool driven_by_parent(const WorkerComm& c, const std::vector<WorkerComm>& comms);

}  // namespace trainmover::worker
