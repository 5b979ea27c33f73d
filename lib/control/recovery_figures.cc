// The recovery's figures (recovery_done): the downtime breakdown of a seat
// and the CPU on the recovery's critical path.
#include <algorithm>

#include "control/coordinator_impl.h"

namespace trainmover::control {

using nlohmann::json;

// Adds the phase that ends to the critical path (Recovery::cpu_by_phase).
void Coordinator::Impl::close_cpu_phase() {
  Recovery& r = *recovery_;
  if (r.phase_cpu_s > 0) r.cpu_by_phase[recovery_state_name(r.state)] += r.phase_cpu_s;
  r.phase_cpu_s = 0;
}

// The recovery's CPU on its critical path, by part: each phase's most
// costly ack, the slowest joiner's first step (its own figure: the other
// ranks run the same step) and the coordinator's thread.
std::map<std::string, double> Coordinator::Impl::critical_cpu_parts() const {
  const Recovery& r = *recovery_;
  std::map<std::string, double> parts = r.cpu_by_phase;
  double first_step = 0;
  for (const Seat& seat : r.seats) {
    const json& js = seat.joiner_step;
    if (js.is_object() && js.contains("cpu_s") && js["cpu_s"].is_number())
      first_step = std::max(first_step, js["cpu_s"].get<double>());
  }
  parts["first_step"] = first_step;
  parts["coordinator"] = std::max(0.0, thread_cpu_seconds() - r.coordinator_cpu_start);
  return parts;
}

json Coordinator::Impl::breakdown(const Seat& seat) const {
  const Recovery& r = *recovery_;
  Clock::time_point now = Clock::now();
  double transfer = to_seconds(r.transfer_done - r.transfer_started);
  return {{"recovery", r.id},
          {"slot", seat.slot},
          {"slots", r.slots()},
          {"cause", recovery_cause_name(r.cause)},
          {"standby", seat.joiner},
          {"epoch", r.epoch},
          {"path", r.path},
          {"donor", seat.donor},
          {"bytes", seat.bytes},
          {"resume_step", r.resume_step},
          {"last_step", r.last_step},
          // Steps some rank had finished and does again: at most the step in
          // flight, unless the recovery rolled back to a checkpoint.
          {"redone_steps", r.last_step > r.resume_step ? r.last_step - r.resume_step : 0},
          {"downtime_s", to_seconds(now - seat.failed_at)},
          {"detection_s", to_seconds(seat.detected_at - seat.failed_at)},
          {"switch_s", to_seconds(r.switched_at - seat.detected_at) - transfer},
          {"state_transfer_s", transfer},
          {"first_step_s", to_seconds(now - r.switched_at)}};
}

}  // namespace trainmover::control
