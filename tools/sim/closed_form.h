// Closed-form ETTR for checkpoint-restart with only unexpected failures
// (Poisson, mean mttf_s), a blocking save of save_s every interval_s of
// compute, and a downtime of restart_s after each failure.
#pragma once

namespace trainmover::sim {

// First order (Young/Daly): 1 - T_save/tau - (T_restart + tau/2) / MTTF.
double first_order_ettr(double save_s, double interval_s, double restart_s, double mttf_s);

// Exact for the simulated model: a segment of L = tau + T_save must run
// without failure; failures also strike during recovery and restart it. The
// expected wall time per segment is e^{D/M} M (e^{L/M} - 1), giving
//   ETTR = tau e^{-D/M} / (M (e^{L/M} - 1)).
double renewal_ettr(double save_s, double interval_s, double restart_s, double mttf_s);

}  // namespace trainmover::sim
