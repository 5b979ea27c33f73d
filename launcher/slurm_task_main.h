// The command line of trainmover-launch's Slurm task mode:
//   trainmover-launch --slurm-task (--slot K | --standby-task) [--node NAME] -- PROGRAM...
//   trainmover-launch --slurm-task --exit-report PID --wait-status S
// (slurm_task.h). Returns the process's exit status.
#pragma once

namespace trainmover::launcher {

// True when argv asks for the task mode (its first argument is --slurm-task).
bool is_slurm_task(int argc, char** argv);
int slurm_task_main(int argc, char** argv);

}  // namespace trainmover::launcher
