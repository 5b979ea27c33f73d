// What recovery.h declares: the state names and the seat lookups of one
// Recovery (the state machine itself is in coordinator_recovery.cc).
#include "control/recovery.h"

#include <utility>

namespace trainmover::control {

const char* recovery_cause_name(RecoveryCause cause) {
  return cause == RecoveryCause::kMigration ? "migration" : "failure";
}

const char* recovery_state_name(RecoveryState state) {
  switch (state) {
    case RecoveryState::kChooseJoiner:
      return "choose_joiner";
    case RecoveryState::kWaitStandby:
      return "wait_standby";
    case RecoveryState::kPromote:
      return "promote";
    case RecoveryState::kDrain:
      return "drain";
    case RecoveryState::kPrepare:
      return "prepare";
    case RecoveryState::kTransfer:
      return "transfer";
    case RecoveryState::kRollback:
      return "rollback";
    case RecoveryState::kSwitch:
      return "switch";
    case RecoveryState::kFirstStep:
      return "first_step";
    case RecoveryState::kDone:
      return "done";
    case RecoveryState::kAbandoned:
      return "abandoned";
  }
  return "unknown";
}

const Seat* Recovery::seat_of_slot(int slot) const {
  for (const Seat& s : seats) {
    if (s.slot == slot) return &s;
  }
  return nullptr;
}

Seat* Recovery::seat_of_slot(int slot) {
  return const_cast<Seat*>(std::as_const(*this).seat_of_slot(slot));
}

Seat* Recovery::seat_of_joiner(int standby) {
  for (Seat& s : seats) {
    if (standby >= 0 && s.joiner == standby) return &s;
  }
  return nullptr;
}

Seat* Recovery::seat_of_donor(int slot) {
  for (Seat& s : seats) {
    if (slot >= 0 && s.donor == slot && s.send_error.empty()) return &s;
  }
  return nullptr;
}

std::vector<int> Recovery::slots() const {
  std::vector<int> out;
  for (const Seat& s : seats) out.push_back(s.slot);
  return out;
}

}  // namespace trainmover::control
