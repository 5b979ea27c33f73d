// StageComm: how a pipeline stage talks to the rest of a DP x PP job, all
// through the C API (trainmover.h).
//
// Slot mapping: slot s serves stage s / D, DP index s % D (D = --dp). The
// D replicas of a stage are consecutive slots; the stages of DP replica d
// are slots d, D+d, 2D+d, ...
//
// Communicators: a "world" one of all D*P slots carries the pipeline's
// send/recv between pipeline neighbours (activations forward, their
// gradients backward) and the few job-wide agreements; the DP groups are
// split from it (tm_comm_split, color = stage, key = DP index, so group
// slot = DP index) and carry the gradient allreduce. The worker switches the
// world, and with it every group (trainmover.h, Groups). A single-process
// run (D = P = 1) opens none and needs no store.
//
// Errors carry the C API's detail and the slot at fault. Not thread-safe: one
// training thread per process.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "trainmover/trainmover.h"

namespace trainmover::gpt {

struct Topology {
  int dp = 1;
  int pp = 1;
  int slot = 0;

  int nslots() const { return dp * pp; }
  int stage() const { return slot / dp; }
  int dp_index() const { return slot % dp; }
  int slot_of(int stage, int dp_index) const { return stage * dp + dp_index; }
};

// The role of pipeline stage `stage` of `pp`: none (one stage), first,
// middle or last, as the traces and the coordinator name it.
tm_stage_t stage_role(int stage, int pp);
const char* role_name(tm_stage_t role);  // "none", "first", "middle", "last"
// The stages whose traces a standby warms up on, one per distinct role:
// the first, stage 1 (the middle role), the last.
std::vector<int> warmed_stages(int pp);

class StageComm {
 public:
  // D = P = 1: no communicator. Else reads the job from the TRAINMOVER_*
  // environment (as trainmover-launch sets it), which must have D*P slots,
  // and joins the world and the DP group communicators.
  static Result<std::unique_ptr<StageComm>> create(int dp, int pp);
  // A standby promoted to `slot`: the same communicators, opened as
  // standbys (tm_comm_init_standby); the worker joins them to the job.
  static Result<std::unique_ptr<StageComm>> create_standby(int dp, int pp, int slot);
  // A standby's warm-up of `stage`: the communicators of its slot at DP
  // index 0, as sandboxes replaying that slot's traces from the job's trace
  // directory (TRAINMOVER_TRACE_DIR); nothing leaves the process.
  static Result<std::unique_ptr<StageComm>> create_sandbox(int dp, int pp, int stage);
  // The trace files a sandbox of `stage` replays, in `trace_dir`.
  static std::vector<std::string> trace_paths(const std::string& trace_dir, int dp, int pp,
                                              int stage);
  // A warmed-up stage's sandboxes turned into standbys of the job in place
  // (tm_comm_go_standby, tm_comm_go_split), so that what the warm-up
  // allocated around them stays valid. No slot is needed: a standby does it
  // before it is promoted, so its promotion makes no communicator.
  Status become_standby();
  // Promoted to `slot`, of this stage: the slot the communicators will join.
  Status take_slot(int slot);
  // Registers the communicators with the runtime's worker, each with the job
  // slots that serve its slots.
  Status register_with(tm_worker_t worker) const;
  // Only create() can make the key: use it.
  struct Key {
   private:
    Key() = default;
    friend class StageComm;
  };
  StageComm(Key, const Topology& topo) : topo_(topo) {}
  ~StageComm();
  StageComm(const StageComm&) = delete;
  StageComm& operator=(const StageComm&) = delete;

  const Topology& topology() const { return topo_; }

  // With the same DP index at stage + 1 (next) or stage - 1 (prev).
  Status send_next(const void* buf, size_t count, tm_datatype_t type);
  Status recv_next(void* buf, size_t count, tm_datatype_t type);
  Status send_prev(const void* buf, size_t count, tm_datatype_t type);
  Status recv_prev(void* buf, size_t count, tm_datatype_t type);
  // In place, over this stage's DP group; nothing when D = 1.
  Status dp_allreduce(void* buf, size_t count, tm_datatype_t type, tm_redop_t op);
  // Marks a training step for recording and replay (tm_iteration_begin /
  // tm_iteration_end on every communicator); nothing when there is none.
  Status iteration_begin();
  Status iteration_end();
  // In place, over every slot; nothing when there is one.
  Status world_allreduce(void* buf, size_t count, tm_datatype_t type, tm_redop_t op);

 private:
  Result<int> neighbour(int stage) const;  // the slot of `stage` with this DP index
  Status send(const void* buf, size_t count, tm_datatype_t type, int stage);
  Status recv(void* buf, size_t count, tm_datatype_t type, int stage);

  Topology topo_;
  tm_comm_t world_ = nullptr;
  tm_comm_t dp_ = nullptr;
};

}  // namespace trainmover::gpt
