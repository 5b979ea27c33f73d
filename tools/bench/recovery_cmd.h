// `trainmover-bench recovery`: the example job loses a rank, recovered by
// TrainMover, by stop-and-restart from a checkpoint, and by a cold standby
// with a full communicator rebuild, at each N (recovery_run.h).
#pragma once

namespace trainmover::bench {

// argv[0] is "recovery". Exit status: 0 after measuring (whether or not the
// goals are met), 1 when a run failed, 2 for a bad command line.
int recovery_main(int argc, char** argv);

}  // namespace trainmover::bench
