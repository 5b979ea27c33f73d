// One recovery of one or more slots, as the coordinator drives it: an
// explicit state machine, each state with its deadline (docs/runtime.md
// draws it).
//
//   kChooseJoiner -> kPromote -> [kDrain] -> kPrepare -> kTransfer ---> kSwitch -> kFirstStep
//        |  ^                                         \-> kRollback -/       -> kDone
//        v  | (a standby became ready)
//   kWaitStandby --(standby_wait passed)--> kAbandoned (the job stops)
//
// A joiner that fails in any state before kFirstStep sends the recovery back
// to kChooseJoiner with a new epoch (its view is never reused). So does a
// slot that fails before kSwitch (a stayer, or a donor in kTransfer): it is
// folded in as one more seat, its donor another live replica, else every
// rank rolls back (kRollback). kDrain is a planned migration's: every rank is held at
// one step boundary before the prepare, so that no collective fails.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
const char* recovery_cause_name(RecoveryCause cause);  // "failure", "migration"

// Whom an order went to: a slot (an active rank) or a standby (the joiner).
struct OrderTarget {
  int slot = -1;
  int standby = -1;
};

// One slot a recovery replaces, and who takes it.
struct Seat {
  int slot = -1;
  int joiner = -1;  // standby id; -1 until one is chosen
  int donor = -1;   // slot sending its state; -1 for a rollback
  uint64_t bytes = 0;
  std::string receive_error;  // kTransfer: the joiner's failed receive
  std::string send_error;     // kTransfer: its donor's failed send
  bool first_step_seen = false;
  // kSwitch: the joiner died after some ranks may have switched to it. The
  // switch completes without it and its slot fails in the new epoch.
  std::optional<Clock::time_point> joiner_lost_at;
  Clock::time_point failed_at;  // the failure (or the migrate request)
  Clock::time_point detected_at;
  nlohmann::json joiner_step;  // the joiner's own figures of its first step (FirstStep)
};

// One recovery: every slot it replaces (its seats, in the order they failed)
// switches in one epoch. A failure while it runs, before the switch, adds a
// seat and starts a new round (a new epoch, every joiner promoted again).
struct Recovery {
  uint64_t id = 0;
  RecoveryCause cause = RecoveryCause::kFailure;
  RecoveryState state = RecoveryState::kChooseJoiner;
  Clock::time_point deadline = Clock::time_point::max();
  uint64_t epoch = 0;            // of the view being installed
  std::vector<Seat> seats;       // never empty; a migration has one
  std::set<int> failed_joiners;  // standbys tried and lost
  std::string path;              // "replica", "leaver" or "rollback"
  uint64_t resume_step = UINT64_MAX;
  uint64_t last_step = 0;                    // the highest boundary a prepare ack named
  uint64_t rollback_high = 0;                // the newest checkpoint a rollback ack named
  uint64_t drain_step = 0;                   // kDrain: the boundary every rank must be held at
  std::map<int, uint64_t> held_at;           // kDrain: slot -> the boundary it acked
  std::map<uint64_t, OrderTarget> awaiting;  // order id -> who must ack

  // The first seat's slot: a migration's leaver.
  int leaver() const { return seats.front().slot; }
  // The seat of `slot` (or of the joiner `standby`); null when none.
  Seat* seat_of_slot(int slot);
  const Seat* seat_of_slot(int slot) const;
  Seat* seat_of_joiner(int standby);
  // A seat whose state `slot` sends and whose send has not failed yet.
  Seat* seat_of_donor(int slot);
  std::vector<int> slots() const;

  // For the downtime breakdown (each seat has its own failure times).
  // The recovery's work on its critical path, as if each process had a core
  // of its own: per phase the most CPU any process acked for its order
  // (Ack::cpu_s); their sum, with the coordinator's own, is recovery_done's
  // critical_cpu_s.
  double phase_cpu_s = 0;                      // this phase so far: the most of its acks
  std::map<std::string, double> cpu_by_phase;  // each phase's part, by state name
  double coordinator_cpu_start = 0;
  Clock::time_point transfer_started;
  Clock::time_point transfer_done;
  Clock::time_point switched_at;
};

}  // namespace trainmover::control
