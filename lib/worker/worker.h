// Worker: the runtime inside a training process (the C API tm_worker_* in
// trainmover.h is a thin layer over it). It connects the process to the
// job's coordinator (lib/control's ControlClient: registration, heartbeats,
// orders), keeps the registered state buffers and their step snapshots, and
// carries out the coordinator's orders on every communicator the program
// registered: abort, prepare, state transfer, rollback, switchover.
//
// Step commit: at every step boundary the registered buffers are copied into
// one of two snapshots (the boundaries of the last two steps). A rank that
// failed mid-step, or that finished a step its peers did not, goes back to
// the agreed resume step from a snapshot, so a step's updates take effect
// everywhere or nowhere. Two suffice because in a job whose communicators
// connect every slot no rank can be more than one step ahead of another.
// Cost: one copy of the state per step and twice the state's memory.
//
// Threading: one thread (the training thread) calls every method. The
// control client's own thread heartbeats meanwhile.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/secret.h"
#include "common/status.h"
#include "control/control_client.h"
#include "control/lifeline.h"
#include "rendezvous/store.h"
#include "trainmover/trainmover.h"
#include "worker/pmix_failures.h"
#include "worker/state_link.h"

namespace trainmover::worker {

enum class WorkerKind { kAlone, kActive, kStandby };

// How the communicators change membership (TRAINMOVER_SWITCH): the
// two-phase delta switch, or a full rebuild, in which every member destroys
// each communicator and creates it again in the new epoch (the baseline the
// delta switch is measured against; trainmover-launch --switch rebuild).
enum class SwitchMode { kDelta, kRebuild };

// A communicator of the program and, for each of its slots, the job slot
// that serves it.
struct WorkerComm {
  tm_comm_t comm = nullptr;
  std::vector<int> job_slots;
};

using RollbackFn = tm_result_t (*)(void* context, uint64_t* next_step);

class Worker {
 public:
  // From the environment trainmover-launch sets (trainmover(7)): without
  // TRAINMOVER_CONTROL the process runs alone (no coordinator; boundaries
  // cost nothing and recover() fails).
  static Result<std::unique_ptr<Worker>> create();
  ~Worker();

  WorkerKind kind() const { return kind_; }
  int slot() const { return slot_; }

  Status register_buffer(const std::string& name, void* data, size_t bytes);
  Status add_comm(tm_comm_t comm, std::vector<int> job_slots);
  void set_rollback(RollbackFn fn, void* context) {
    rollback_ = fn;
    rollback_context_ = context;
  }

  // The step `next_step` is about to run: snapshot, heartbeat, and carry out
  // a recovery the coordinator ordered meanwhile. Returns the step to run
  // (next_step unless a recovery moved the state).
  Result<uint64_t> step_boundary(uint64_t next_step);
  // After a failed collective: aborts every communicator, carries out the
  // recovery, and returns the step the state was restored to.
  Result<uint64_t> recover();
  // Standby warm-up progress (see tm_worker_warmup_begin/_done).
  Status warmup_begin(control::StageRole role);
  Status warmup_done(std::set<control::StageRole> warm, std::set<control::StageRole> cold,
                     const std::string& detail);
  // Standby: waits to be promoted (reporting it ready for every role, cold,
  // unless warmup_done() did); returns the slot.
  Result<int> wait_promotion(Duration timeout);
  // Standby, after its communicators (standbys) and buffers are registered:
  // joins, receives the state, switches; returns the step to resume from.
  Result<uint64_t> join();
  // Training is done: tells the coordinator, so the exit is no failure.
  Status finish();

 private:
  Worker() = default;
  Result<uint64_t> boundary(uint64_t next_step);
  Result<uint64_t> serve_orders(std::optional<control::Order> first);
  Status carry_out(const control::Order& order, bool& switched, uint64_t& resume);
  Status prepare(const control::Order& order);
  Status send_state(const control::Order& order, uint64_t& bytes);
  Status receive_state(const control::Order& order, uint64_t& bytes);
  Status rollback(uint64_t at_most, uint64_t& step);
  Status switch_over(const control::Order& order);
  Status rebuild_comms(uint64_t epoch);
  Status restore(uint64_t step);
  // The joiner's first step: starts the measure at its first boundary after
  // the switch, sends it (control::FirstStep) at the next, or at finish()
  // when the job ends first.
  Status measure_first_step(uint64_t next_step);
  Status report_first_step();
  void abort_all(const Status& why);
  // The client thread's view of an order: a recovery ordered while the
  // program is inside a step aborts the step's collectives at once (a peer
  // that went silent would hold them until the collective timeout, longer
  // than the coordinator waits for the acks).
  void interrupt(const control::Order& order);
  void set_in_step(bool in_step);
  // The coordinator is lost (ControlClientOptions::on_lost, on the client's
  // thread): ends a step's collectives and a receive at once.
  void abort_step(const Status& why);
  void report_failures();
  // `st`, or once the coordinator is lost, that: "lost the coordinator at
  // HOST:PORT: why; stopping" (the rank must stop: no one else may publish
  // views).
  Status lost(Status st) const;
  void set_receiving(bool receiving);
  Status ack(const control::Order& order, const Status& result, uint64_t step = 0,
             uint64_t bytes = 0);
  std::string state_key(uint64_t epoch, int slot) const;
  Status offer(const control::Order& promote);
  Status restart_joined_comms();
  Status promoted_again(const control::Order& order);
  Result<rendezvous::Store*> state_store();

  WorkerKind kind_ = WorkerKind::kAlone;
  SwitchMode switch_mode_ = SwitchMode::kDelta;
  // The process's CPU seconds when the last order arrived (set on the
  // control client's thread): each ack reports the CPU spent since.
  std::atomic<double> order_cpu_mark_{0};
  std::unique_ptr<PmixFailures> pmix_failures_;  // TRAINMOVER_PMIX_EVENTS=1
  // Tells the launcher of this process's death at the start of its exit;
  // released when it ends on purpose (finish(), ~Worker).
  std::unique_ptr<control::LifelineHolder> lifeline_;
  Duration donor_delay_ = Duration::zero();          // TRAINMOVER_TEST_DONOR_DELAY
  Duration joiner_switch_delay_ = Duration::zero();  // TRAINMOVER_TEST_JOINER_SWITCH_DELAY
  Duration exit_delay_ = Duration::zero();           // TRAINMOVER_TEST_EXIT_DELAY
  int slot_ = -1;
  uint64_t job_id_ = 0;
  std::optional<JobSecret> secret_;
  std::string store_address_;
  std::string state_host_;  // where a joiner listens for its state
  std::unique_ptr<control::ControlClient> client_;
  std::unique_ptr<rendezvous::Store> state_store_;  // state_store(): training thread only
  std::vector<StateBuffer> buffers_;
  // Guards comms_, in_step_ and receiving_, which the client's thread reads
  // (interrupt).
  std::mutex comms_mutex_;
  std::vector<WorkerComm> comms_;
  // Between a boundary and the next boundary, recover() or finish(): the
  // program is running a step and its communicators are alive.
  bool in_step_ = false;
  // A joiner inside receive_state(): state_listener_ may be cancelled.
  bool receiving_ = false;
  // A joiner whose communicators joined a round's epoch (offer()).
  bool joined_ = false;
  bool stopped_ = false;  // a stop order came: lost() keeps its reason
  RollbackFn rollback_ = nullptr;
  void* rollback_context_ = nullptr;
  // Step snapshots: the state at the last two boundaries (see above).
  std::vector<std::byte> snapshots_[2];
  uint64_t snapshot_step_[2] = {UINT64_MAX, UINT64_MAX};
  std::optional<uint64_t> last_boundary_;
  int announce_steps_ = 0;  // a joiner's boundaries after its switch that heartbeat at once
  bool rolled_back_ = false;
  std::optional<control::Order> promotion_;
  bool warmup_reported_ = false;             // warmup_done() was called
  std::set<control::StageRole> warm_roles_;  // as reported by warmup_done()
  // The joiner's first step after its switch (measure_first_step).
  struct StepMeasure {
    uint64_t step = 0;
    Clock::time_point start;
    double cpu_s = 0;
    uint64_t minflt = 0;
  };
  bool measure_joiner_step_ = false;  // set by join(), cleared once sent
  std::optional<StepMeasure> first_step_;
  // A planned migration's drain not yet acked: held at the boundary of its
  // step (0: the next boundary) until the next order.
  std::optional<control::Order> drain_;
  std::optional<StateListener> state_listener_;
};

}  // namespace trainmover::worker
