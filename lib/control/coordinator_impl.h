// The coordinator's internals, shared by coordinator.cc (connections,
// membership, failure detection) and coordinator_recovery.cc (the recovery
// state machine). Everything here runs on the coordinator's thread, except
// post() and the fields under `mutex_`.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/event_loop.h"
#include "control/control_server.h"
#include "control/coordinator.h"
#include "control/event_log.h"
#include "control/recovery.h"

namespace trainmover::control {

using ConnectionId = ControlServer::ConnectionId;

// One client connection, once it registered.
struct Peer {
  PeerKind kind = PeerKind::kCtl;
  bool registered = false;
  int slot = -1;     // kActive (and a joiner once switched)
  int standby = -1;  // kStandby
  int task = -1;     // the resource manager's task (Register::task), -1 none
  uint64_t instance_id = 0;
  Clock::time_point last_heard;
  bool follow_events = false;
  bool finished = false;  // said goodbye: its close is no failure
};

// A slot a rank reported (FailureReport), not yet corroborated.
struct Suspect {
  int by_slot = -1;
  std::string error;
  Clock::time_point since;
};

// A failure (or migration) waiting for its recovery.
struct PendingRecovery {
  int slot = -1;
  RecoveryCause cause = RecoveryCause::kFailure;
  Clock::time_point failed_at;
  Clock::time_point detected_at;
};

class Coordinator::Impl {
 public:
  Impl(CoordinatorConfig config, const JobSecret& secret, std::unique_ptr<EventLoop> loop,
       std::unique_ptr<EventLog> events);
  Status listen();
  void run();
  void stop();
  // Runs `task` on the coordinator's thread.
  void post(std::function<void()> task);
  bool running() const { return !stopping_; }

  const std::string& address() const { return server_->address(); }
  std::optional<std::string> stopped_reason() const;
  bool wait_stopped(Duration timeout) const;

  // ---- on the coordinator's thread -----------------------------------------
  void handle_exit(pid_t pid, int exit_code, int signal, const std::string& host = {});
  void handle_dying(pid_t pid, const std::string& host);
  Status request_migration(int slot);
  nlohmann::json status_json() const;
  bool finished_training(pid_t pid) const { return finished_pids_.contains(pid); }
  std::vector<nlohmann::json> event_list() const;

 private:
  void tick(Clock::time_point now);
  void run_tasks();
  void beat(Clock::time_point now);
  void check_heartbeats(Clock::time_point now);

  void on_message(ConnectionId id, Message message);
  void on_closed(ConnectionId id, const Status& why);
  void reply(ConnectionId id, Status status);
  void handle(ConnectionId id, Peer& peer, const Message& message);
  void handle_register(ConnectionId id, const Register& r);
  void handle_heartbeat(Peer& peer, const Heartbeat& h);
  void handle_failure_report(Peer& peer, const FailureReport& r);
  void handle_task_lost(const Peer& by, const TaskLost& m);
  // Reported slots that also went silent have failed; reports of slots
  // that kept heartbeating for the heartbeat timeout are dropped.
  void check_suspects(Clock::time_point now);
  void handle_warmup(Peer& peer, const WarmupProgress& w);
  void handle_first_step(Peer& peer, const FirstStep& f);
  void handle_subscribe(ConnectionId id, Peer& peer, const Subscribe& s);

  // Failure sources all end here. `failed_at` is the best estimate of when
  // it happened (the last heartbeat for a silent peer).
  void slot_failed(int slot, const std::string& source, const std::string& detail,
                   Clock::time_point failed_at);
  void standby_lost(int id, const std::string& detail);
  // Orders the process at `id` to stop and closes its connection, so a
  // process declared failed (maybe only paused) can never act again.
  void fence(ConnectionId id, const std::string& reason);
  void stop_job(const std::string& reason);
  void emit(const std::string& name, nlohmann::json fields);
  bool being_recovered(int slot) const;
  std::optional<ConnectionId> connection_of_slot(int slot) const;
  std::optional<ConnectionId> connection_of_standby(int id) const;

  // ---- the recovery state machine (coordinator_recovery.cc) ----------------
  void enqueue_recovery(PendingRecovery pending);
  // Starts the oldest pending recovery, with every failure pending behind
  // it as one more seat (one epoch replaces them all).
  void begin_next_recovery();
  // A slot failed while a failure recovery has not switched yet: it becomes
  // one more seat, and the recovery starts a new round (new_round). False
  // when the recovery cannot take it (a migration, or past its prepare).
  bool fold_failure(int slot, Clock::time_point failed_at, Clock::time_point detected_at);
  // Back to kChooseJoiner with the seats' live joiners kept: a new epoch,
  // each joiner promoted again, the view published again, new donors.
  void new_round();
  // A joiner for every seat without one (else kWaitStandby), a new epoch,
  // and the promote orders.
  void choose_joiner();
  void publish_and_prepare();
  void choose_donor();
  void start_transfer();
  // Orders every rank and the joiner to load their newest checkpoint of a
  // step <= at_most (UINT64_MAX: the newest).
  void start_rollback(uint64_t at_most);
  // A planned migration's drain: every rank is held at one step boundary
  // (recovery.h). raise_drain_step moves that boundary on to `step` (when
  // higher) and orders every rank held below it to move on to it.
  void start_drain();
  // An order of `kind` for the recovery's epoch and first seat, carrying
  // the view (view_json: which slots join, from which base epoch).
  Order recovery_order(OrderKind kind) const;
  // A migration not yet holding the ranks ends when one of them finished
  // the job (slot `finished_slot` said goodbye): `migration_cancelled`.
  void migration_overtaken(int finished_slot);
  void raise_drain_step(uint64_t step);
  void start_switch();
  // kTransfer's acks are in: a joiner whose receive failed while its donor
  // answered is lost; else on to the switch.
  void transfer_acked();
  // kSwitch's acks are in: the joiners serve their slots in the new epoch.
  void switched();
  // The joiner of `slot` completed a step after the switch.
  void seat_first_step(int slot);
  void finish_recovery();
  void abandon(const std::string& reason);
  void enter(RecoveryState state, Duration timeout);
  uint64_t send_order(OrderTarget target, Order order);
  void on_ack(const Peer& peer, const Ack& ack);
  void on_all_acked();
  // A served slot failed during the recovery; true when it was folded in
  // as a seat (else the caller queues its own recovery).
  bool recovery_lost_slot(int slot, Clock::time_point failed_at, Clock::time_point detected_at);
  void recovery_lost_joiner(int standby, const std::string& detail);
  void recovery_deadline_passed();
  void recovery_standby_ready();
  void recovery_saw_step(int slot, uint64_t step);
  std::vector<int> participants() const;
  nlohmann::json join_plan_json() const;
  nlohmann::json view_json() const;
  nlohmann::json breakdown(const Seat& seat) const;
  std::map<std::string, double> critical_cpu_parts() const;
  void close_cpu_phase();

  CoordinatorConfig config_;
  JobSecret secret_;
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<ControlServer> server_;
  std::unique_ptr<EventLog> events_;
  std::shared_ptr<ViewPublisher> publisher_;
  Membership membership_;
  std::unordered_map<ConnectionId, Peer> peers_;
  std::optional<Recovery> recovery_;
  std::deque<PendingRecovery> pending_;
  std::map<int, Suspect> suspects_;  // slot -> the latest report naming it
  // Processes that said goodbye: their exit, however it ends, is no failure
  // (with status 0 not even an event), even when their connection closed
  // before the exit report came; unless a recovery needs them (slot_failed).
  std::set<pid_t> finished_pids_;
  // The processes of failed slots whose exit is not reported yet (a
  // lifeline or a lost connection told first): (host, pid) -> slot, so the
  // report, when it comes, names the slot and how the process ended.
  std::map<std::pair<std::string, pid_t>, int> failed_processes_;
  uint64_t next_order_id_ = 1;
  uint64_t next_recovery_id_ = 1;
  uint64_t last_epoch_used_ = 0;
  Clock::time_point next_beat_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;  // guards the fields below
  mutable std::condition_variable stopped_changed_;
  std::vector<std::function<void()>> tasks_;
  std::optional<std::string> stopped_;
};

}  // namespace trainmover::control
