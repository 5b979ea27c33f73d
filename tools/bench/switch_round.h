// One round of `trainmover-bench switch`: N slot processes and a standby
// (this binary as `switch-worker`), an embedded store, and this process as
// the driver — the coordinator that publishes views, sets t0 and, in the
// unexpected mode, kills the victim.
#pragma once

#include <cstdint>
#include <map>

#include "common/status.h"
#include "switch_options.h"
#include "switch_protocol.h"

namespace trainmover::bench {

struct SwitchRoundPlan {
  SwitchMode mode = SwitchMode::kPlanned;
  SwitchImpl impl = SwitchImpl::kDelta;
  int nranks = 4;
  int victim = 2;
  uint64_t bytes = 4096;
  int warmup = 5;
  double timeout_s = 60;
  bool trace = false;  // workers also measure their run-queue wait
};

// What a round recorded: the driver's times and every process's stamps
// (who -> stamps; the victim has none after an unexpected kill).
struct SwitchRecord {
  int64_t t0 = 0;              // switch request (go) or kill
  int64_t view_published = 0;  // planned delta: the view of epoch 1 written
  std::map<int, Stamps> stamps;
};

// Runs the round. Fails naming the process or the step at fault; no worker
// outlives the call.
Result<SwitchRecord> run_switch_round(const SwitchRoundPlan& plan);

}  // namespace trainmover::bench
