// One recovery of one slot, as the coordinator drives it: an explicit state
// machine, each state with its deadline (docs/runtime.md draws it).
//
//   kChooseJoiner -> kPromote -> [kDrain] -> kPrepare -> kTransfer ---> kSwitch -> kFirstStep
//        |  ^                                         \-> kRollback -/       -> kDone
//        v  | (a standby became ready)
//   kWaitStandby --(standby_wait passed)--> kAbandoned (the job stops)
//
// A joiner that fails in any state before kFirstStep sends the recovery back
// to kChooseJoiner with a new epoch (its view is never reused). A donor that
// fails in kTransfer is replaced by another live replica, else the recovery
// turns to kRollback. kDrain is a planned migration's: every rank is held at
// one step boundary before the prepare, so that no collective fails.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "common/clock.h"

namespace trainmover::control {

enum class RecoveryState {
  kChooseJoiner,
  kWaitStandby,
  kPromote,
  kDrain,
  kPrepare,
  kTransfer,
  kRollback,
  kSwitch,
  kFirstStep,
  kDone,
  kAbandoned
};
const char* recovery_state_name(RecoveryState state);

enum class RecoveryCause { kFailure, kMigration };

// Whom an order went to: a slot (an active rank) or a standby (the joiner).
struct OrderTarget {
  int slot = -1;
  int standby = -1;
};

struct Recovery {
  uint64_t id = 0;
  int leaver = -1;
  RecoveryCause cause = RecoveryCause::kFailure;
  RecoveryState state = RecoveryState::kChooseJoiner;
  Clock::time_point deadline = Clock::time_point::max();
  uint64_t epoch = 0;            // of the view being installed
  int joiner = -1;               // standby id
  std::set<int> failed_joiners;  // standbys tried and lost
  int donor = -1;                // slot; -1 for rollback
  std::string path;              // "replica", "leaver" or "rollback"
  uint64_t resume_step = UINT64_MAX;
  uint64_t last_step = 0;           // the highest boundary a prepare ack named
  uint64_t rollback_high = 0;       // the newest checkpoint a rollback ack named
  uint64_t drain_step = 0;          // kDrain: the boundary every rank must be held at
  std::map<int, uint64_t> held_at;  // kDrain: slot -> the boundary it acked
  uint64_t bytes = 0;
  std::map<uint64_t, OrderTarget> awaiting;  // order id -> who must ack

  // For the downtime breakdown.
  Clock::time_point failed_at;  // the failure (or the migrate request)
  Clock::time_point detected_at;
  Clock::time_point transfer_started;
  Clock::time_point transfer_done;
  Clock::time_point switched_at;
  nlohmann::json joiner_step;  // the joiner's own figures of its first step (FirstStep)
};

}  // namespace trainmover::control
