// The job's membership as the coordinator keeps it: the epoch, which process
// serves each slot and in which role, and the standby pool with each
// standby's warm-up state. Pure bookkeeping: no I/O, no clock, no threads.
//
// Slot layout (the contract every part of the runtime shares): a job of
// dp x pp slots places slot s at pipeline index pp_index = s / dp and data
// parallel index dp_index = s % dp. The slots of one pipeline stage are thus
// contiguous, and they are each other's DP replicas.
//
// Threading: none; the owner (the coordinator's loop thread) serialises use.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainmover::control {

// Which pipeline stage a slot runs; kNone when the job has one stage.
enum class StageRole { kNone, kFirst, kMiddle, kLast };
const char* stage_role_name(StageRole role);
Result<StageRole> parse_stage_role(std::string_view name);

struct Layout {
  int dp = 1;
  int pp = 1;

  static Result<Layout> create(int dp, int pp);
  int nslots() const { return dp * pp; }
  bool valid_slot(int slot) const { return slot >= 0 && slot < nslots(); }
  int dp_index(int slot) const { return slot % dp; }
  int pp_index(int slot) const { return slot / dp; }
  int slot_of(int dp_index, int pp_index) const { return pp_index * dp + dp_index; }
  StageRole role(int slot) const;
  // The distinct roles of this layout (what a generic standby warms up for).
  std::vector<StageRole> roles() const;
};

// One process of the job, as it named itself when it registered.
struct ProcessId {
  uint64_t instance_id = 0;  // random per process, never reused
  pid_t pid = 0;
  std::string host;
};

struct SlotState {
  std::optional<ProcessId> process;  // empty while the slot has no live server
  uint64_t step = 0;                 // the step its last heartbeat reported
};

// ["first", "last"]: roles as the protocol and the events name them.
nlohmann::json roles_json(const std::set<StageRole>& roles);

enum class WarmupState { kStarting, kWarming, kReady, kFailed };
const char* warmup_state_name(WarmupState state);

struct Standby {
  int id = 0;  // the pool's own numbering, never reused
  ProcessId process;
  WarmupState state = WarmupState::kStarting;
  StageRole warming = StageRole::kNone;  // kWarming: the role it replays now
  std::set<StageRole> ready_roles;       // roles it may be promoted to
  std::set<StageRole> warm_roles;        // those of them it warmed up for
  std::string error;                     // kFailed: why; kReady: why a role is cold
};

class Membership {
 public:
  explicit Membership(Layout layout) : layout_(layout), slots_(layout.nslots()) {}

  const Layout& layout() const { return layout_; }
  uint64_t epoch() const { return epoch_; }
  // The epoch of the next view; the caller publishes it, then commits.
  uint64_t next_epoch() const { return epoch_ + 1; }
  void commit_epoch(uint64_t epoch) { epoch_ = epoch; }

  // An active rank registers for `slot`; fails when the slot is served.
  Status assign(int slot, const ProcessId& process);
  void vacate(int slot);
  const SlotState& slot(int slot) const { return slots_[slot]; }
  bool served(int slot) const { return slots_[slot].process.has_value(); }
  void set_step(int slot, uint64_t step) { slots_[slot].step = step; }
  bool all_served() const;

  // Adds a standby in kStarting; returns its id.
  int add_standby(const ProcessId& process);
  // `warm` must be a subset of `ready`.
  Status set_warmup(int id, WarmupState state, StageRole warming, std::set<StageRole> ready,
                    std::set<StageRole> warm, std::string error);
  void remove_standby(int id);
  const Standby* standby(int id) const;
  const std::vector<Standby>& standbys() const { return standbys_; }
  // Standbys that can still become ready (not failed).
  int usable_standbys() const;
  // The ready standby for `role` with the lowest id, skipping `exclude`.
  std::optional<int> pick_standby(StageRole role, const std::set<int>& exclude = {}) const;
  // Moves standby `id` out of the pool into `slot` (which must be vacant).
  Status promote(int id, int slot);

  // Served slots of the same pipeline stage as `slot`, other than `slot`.
  std::vector<int> replicas_of(int slot) const;
  std::optional<int> slot_of_instance(uint64_t instance_id) const;
  std::optional<int> slot_of_pid(pid_t pid, std::string_view host = {}) const;
  std::optional<int> standby_of_instance(uint64_t instance_id) const;
  std::optional<int> standby_of_pid(pid_t pid, std::string_view host = {}) const;

  // {"epoch", "dp", "pp", "slots": [...], "standbys": [...]}
  nlohmann::json to_json() const;

 private:
  Standby* find_standby(int id);

  Layout layout_;
  uint64_t epoch_ = 0;
  std::vector<SlotState> slots_;
  std::vector<Standby> standbys_;
  int next_standby_id_ = 0;
};

}  // namespace trainmover::control
