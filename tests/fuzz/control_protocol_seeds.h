// One valid message of every type of the control protocol: the seeds of
// fuzz_control_protocol (written by gen_fuzz_seeds).
#pragma once

#include <vector>

#include "control/control_protocol.h"

namespace trainmover::fuzz {

inline std::vector<control::Message> sample_control_messages() {
  using namespace control;  // NOLINT: seed data
  Order prepare;
  prepare.order_id = 7;
  prepare.kind = OrderKind::kPrepare;
  prepare.epoch = 4;
  prepare.slot = 3;
  prepare.view = {{"epoch", 4},
                  {"slots", nlohmann::json::array({{{"slot", 0}, {"pid", 10}, {"host", "h"}}})}};
  Order stop;
  stop.kind = OrderKind::kStop;
  stop.reason = "no standby";
  WarmupProgress warm;
  warm.state = WarmupState::kWarming;
  warm.warming = StageRole::kMiddle;
  warm.ready_roles = {StageRole::kFirst};
  return {Register{PeerKind::kActive, 2, {99, 1234, "node-1"}},
          Welcome{3, 2, 0.2, 1.0},
          Heartbeat{41},
          FailureReport{5, "peer closed the link"},
          ExitReport{4321, -1, 9},
          ExitReport{4322, -1, 0, "n3", true},
          warm,
          StatusRequest{},
          StatusReply{{{"epoch", 1}, {"slots", nlohmann::json::array()}}},
          MigrateRequest{5},
          Subscribe{true, false},
          EventMessage{{{"event", "slot_failed"}, {"slot", 5}}},
          EventsEnd{},
          Reply{false, "no such slot"},
          prepare,
          stop,
          Ack{7, true, "", 40, 12345},
          Goodbye{"done"},
          FirstStep{20, 0.05, 0.04, 123, true},
          TaskLost{3, "PROC-ABORTED"}};
}

}  // namespace trainmover::fuzz
