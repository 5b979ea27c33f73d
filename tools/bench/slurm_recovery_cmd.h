// trainmover-bench slurm-recovery: the example job under srun --trainmover on
// a running Slurm cluster loses a task or a node; TrainMover's standby
// against Slurm's own way (the step ended and run again from its checkpoint).
#pragma once

namespace trainmover::bench {

int slurm_recovery_main(int argc, char** argv);

}  // namespace trainmover::bench
