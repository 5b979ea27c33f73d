// FailureListener: turns the PMIx events that mean "a process of the job is
// gone" into failure reports for the runtime, like any other failure source
// (an exit seen by waitpid, a heartbeat that stopped, a broken link).
//
// Events listened for: PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_ABORTING,
// PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_EVENT_PROC_TERMINATED,
// PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_EVENT_NODE_DOWN, PMIX_ERR_UNREACH and
// PMIX_ERR_LOST_CONNECTION (this process lost its PMIx server: its node's
// daemon is gone). The affected ranks come from PMIX_EVENT_AFFECTED_PROC(S),
// else the event's source. A server that refuses the job events (Slurm
// 22.05's does) leaves only the lost connection: start() still succeeds and
// hears_job_events() says so. Slurm 22.05 delivers none of these events, and a
// PMIx_Notify_event from a task cancels the step there, so this class never
// notifies; it only listens (see ../shared/platform-notes.md).
//
// Threading: the callback runs on PMIx's progress thread, one event at a
// time; it must not block or call back into PMIx. The listener must be
// destroyed before its PmixClient; the destructor deregisters the handler
// and waits until no callback is running.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "pmix/pmix_client.h"

namespace trainmover::pmix {

struct FailureEvent {
  int status = 0;               // the PMIx event code
  std::string status_name;      // PMIx_Error_string of it
  std::vector<uint32_t> ranks;  // the ranks of this job that are gone; may be empty
  bool lost_server = false;     // PMIX_ERR_LOST_CONNECTION: this process's server is gone
};

class FailureListener {
 public:
  using Callback = std::function<void(const FailureEvent&)>;
  static Result<std::unique_ptr<FailureListener>> start(PmixClient& client, Callback callback);
  ~FailureListener();
  FailureListener(const FailureListener&) = delete;
  FailureListener& operator=(const FailureListener&) = delete;

  // The event codes listened for when the server supports them.
  static const std::vector<int>& codes();
  // True when the server accepted every code; false when it refused the job
  // events (Slurm 22.05 does) and only PMIX_ERR_LOST_CONNECTION is heard.
  bool hears_job_events() const { return refused_.empty(); }
  // Why the server refused the job events ("" when it did not).
  const std::string& refusal() const { return refused_; }

  struct State;  // shared with the PMIx callback; defined in the .cc

 private:
  FailureListener(std::shared_ptr<State> state, std::string refused)
      : state_(std::move(state)), refused_(std::move(refused)) {}
  std::shared_ptr<State> state_;
  std::string refused_;
};

}  // namespace trainmover::pmix
