#include "worker/worker_support.h"

#include <sys/resource.h>

#include "api/comm_handle.h"
#include "common/str.h"

namespace trainmover::worker {

ProcessUsage process_usage() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return {};
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return {secs(u.ru_utime) + secs(u.ru_stime), static_cast<uint64_t>(u.ru_minflt)};
}

Status api_status(tm_result_t rc, const std::string& what) {
  if (rc == TM_SUCCESS) return Status::Ok();
  return Status(rc, str_cat(what, ": ", tm_get_last_error()));
}

int comm_slot_of(const WorkerComm& c, int slot) {
  for (size_t i = 0; i < c.job_slots.size(); ++i) {
    if (c.job_slots[i] == slot) return static_cast<int>(i);
  }
  return -1;
}

int parent_index(const WorkerComm& c, const std::vector<WorkerComm>& comms) {
  auto group = api::live_communicator(c.comm);
  if (!group.ok()) return -1;
  for (size_t i = 0; i < comms.size(); ++i) {
    auto parent = api::live_communicator(comms[i].comm);
    if (comms[i].comm != c.comm && parent.ok() && (*group)->is_group_of(**parent))
      return static_cast<int>(i);
  }
  return -1;
}

bool driven_by_parent(const WorkerComm& c, const std::vector<WorkerComm>& comms) {
  return parent_index(c, comms) >= 0;
}

}  // namespace trainmover::worker
