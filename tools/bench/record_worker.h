// The worker side of `trainmover-bench record`: one process of the measured
// data-parallel loop. Re-executed as `trainmover-bench record-worker --phase
// P --count C --passes N --warmup W --recorded K --after M`:
//   live      join the job (recording per the TRAINMOVER_* environment), W
//             unmarked warm-up iterations, then K+M marked ones
//   replay    a sandbox on the trace of the environment's role: K iterations
//             of the same loop, and its compute and update steps timed alone
// Prints one JSON line per measured iteration, {"phase","iter","elapsed_s",
// "crc"} (crc: of slot 0's reduced gradients), and for replay one
// {"phase":"compute","elapsed_s"} line per timed compute and update step.
#pragma once

namespace trainmover::bench {

int record_worker_main(int argc, char** argv);

}  // namespace trainmover::bench
