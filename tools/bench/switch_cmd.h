// `trainmover-bench switch`: replaces one slot's process of an N-slot ring
// by a standby, with the two-phase delta switch and with a full rebuild,
// interleaved, round after round, and reports the median per (mode, impl, N).
#pragma once

namespace trainmover::bench {

// argv[0] is "switch". Exit status: 0; 1 when a round failed (the error
// names the round and the process); 2 for bad arguments.
int switch_main(int argc, char** argv);

}  // namespace trainmover::bench
