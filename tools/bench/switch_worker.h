// `trainmover-bench switch-worker` (hidden): one process of a round of
// `trainmover-bench switch` — a slot's process or the standby. It finds the
// round's store and its slot in the TRAINMOVER_* environment, follows the
// sequence of switch_protocol.h and reports its timestamps through the
// store. Its stdout stays unused (the driver's output is the result).
#pragma once

namespace trainmover::bench {

// argv[0] is "switch-worker". Exit status: 0; 1 when the round failed here
// (the message is on stderr and under error/<who> in the store); 2 for bad
// arguments.
int switch_worker_main(int argc, char** argv);

}  // namespace trainmover::bench
