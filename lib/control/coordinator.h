// Coordinator: the one process-wide authority of a job's membership. It keeps
// who serves each slot and the standby pool, hears of failures from every
// source (exit reports, closed connections, heartbeats that stop, failure
// reports from ranks, orders left unanswered), and drives each recovery
// (recovery.h) to its end: a standby takes the slot, its state comes from a
// live DP replica (or the leaver, for a planned migration; or every rank
// rolls back to the checkpoint when there is no replica), and every rank
// switches to the new epoch and resumes from one agreed step.
//
// It is a library object with no global state, so any process can embed it:
// trainmover-launch in local mode, a thread of srun under Slurm, a test.
// start() binds the control address and starts the coordinator's own thread,
// which runs an EventLoop; the destructor (or stop()) ends it and closes
// every connection, which the clients notice at once.
//
// Threading: every public method may be called from any thread; they hand
// their work to the coordinator's thread and, where they return something,
// wait for it with a timeout. on_event runs on the coordinator's thread and
// must not block or call back into the coordinator.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/secret.h"
#include "common/status.h"
#include "control/control_server.h"
#include "control/membership.h"
#include "control/view_publisher.h"

namespace trainmover::control {

struct CoordinatorConfig {
  std::string address = "127.0.0.1:0";  // the one address it listens on
  uint64_t job_id = 0;
  Layout layout;
  // Clients heartbeat every interval; a peer silent for the timeout has failed.
  Duration heartbeat_interval = std::chrono::milliseconds(200);
  Duration heartbeat_timeout = std::chrono::seconds(1);
  // How long a promote, prepare, rollback or switch order may go unanswered.
  Duration order_timeout = std::chrono::seconds(10);
  Duration transfer_timeout = std::chrono::seconds(60);
  // After the switch: how long to wait for the joiner's first step.
  Duration first_step_timeout = std::chrono::seconds(60);
  // With no ready standby: how long to wait for one before stopping the job.
  Duration standby_wait = std::chrono::seconds(30);
  std::string events_path;                              // empty: events in memory only
  std::shared_ptr<ViewPublisher> publisher;             // null: a MemoryViewPublisher
  std::function<void(const nlohmann::json&)> on_event;  // optional
  ControlServerLimits limits;
};

class Coordinator {
 public:
  static Result<std::unique_ptr<Coordinator>> start(CoordinatorConfig config,
                                                    const JobSecret& secret);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // The address clients connect to ("host:port").
  const std::string& address() const;

  // A launcher embedding the coordinator reports a child's exit here (as an
  // ExitReport message would): exit_code when it exited, else -1 and signal.
  // `host`: where the process ran, as it registered (pids repeat across
  // nodes); empty: any host.
  void report_exit(pid_t pid, int exit_code, int signal, const std::string& host = {});
  // A launcher's lifeline (lifeline.h) says `pid` began an exit it did not
  // choose: its slot fails now, ahead of the exit report, which follows
  // once the kernel has torn the process down.
  void report_dying(pid_t pid, const std::string& host = {});
  // Whether `pid` said goodbye (tm_worker_finish) before its exit was
  // reported and no recovery needed it: that exit, however it ended, is
  // then no failure and ends its slot's part in the job. Call after
  // report_exit() for the same pid.
  Result<bool> finished_training(pid_t pid, Duration timeout = std::chrono::seconds(5));
  // Planned migration of `slot` to a standby; ok once the recovery started.
  Status migrate(int slot, Duration timeout = std::chrono::seconds(5));
  // {"epoch", "dp", "pp", "step", "slots", "standbys", "recovery", "stopped"}
  Result<nlohmann::json> status(Duration timeout = std::chrono::seconds(5));
  Result<std::vector<nlohmann::json>> events(Duration timeout = std::chrono::seconds(5));
  // Why the coordinator stopped the job (it orders every rank to stop, e.g.
  // when no standby came in time); nullopt while the job may go on.
  std::optional<std::string> stopped_reason() const;
  // Waits until stopped_reason() is set or `timeout` passes.
  bool wait_stopped(Duration timeout) const;

  class Impl;  // opaque; coordinator_impl.h

 private:
  explicit Coordinator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace trainmover::control
