// SlurmTask: trainmover-launch's Slurm task mode (--slurm-task), what the
// SPANK plugin execs in every task of a step. The coordinator and the store
// run in srun (srun_side.h); this process runs the task's program as its
// one child, an active rank of `slot` or a standby, and:
//  - reports the child's exit to the coordinator at once, naming the child
//    by pid and node (TRAINMOVER_HOST), so its slot is recovered;
//  - stops a child that is still a standby once every slot finished, or
//    when the coordinator stopped the job or was lost;
//  - forwards SIGINT and SIGTERM (scancel) to the child's process group.
// The job comes from the environment the srun side set: TRAINMOVER_CONTROL,
// TRAINMOVER_STORE, TRAINMOVER_JOB_ID, TRAINMOVER_JOB_SECRET,
// TRAINMOVER_NSLOTS.
//
// Exit status: 0 when the child exited 0, or failed and its exit reached
// the coordinator (the slot is the coordinator's to recover: the step must
// not count it), or was a standby stopped at the job's end; 3 when the
// coordinator stopped the job; else the child's shell status (the report
// did not arrive), 1 when it could not start.
#pragma once

#include <string>
#include <vector>

#include "common/clock.h"

namespace trainmover::launcher {

struct SlurmTaskOptions {
  std::vector<std::string> argv;  // PROGRAM and its arguments
  int slot = -1;                  // the slot it serves; -1: a standby
  std::string host;               // this node's name; empty: SLURMD_NODENAME, else the host name
  Duration kill_grace = seconds(2);
};

int run_slurm_task(const SlurmTaskOptions& options);

// slurm_spank_task_exit's report (--slurm-exit-report): the launcher of
// task `pid` ended abnormally (status as waitpid gives it); its child, named
// in the pid file the launcher left, is reported to the coordinator.
// Returns 0 when the report was delivered.
int report_task_exit(pid_t launcher_pid, int wait_status);

// Where the task-mode launcher `launcher_pid` writes its child's pid.
std::string child_pid_file(pid_t launcher_pid);

}  // namespace trainmover::launcher
