/*
 * The plugin's work in slurmstepd (remote context), per task. Kept small:
 * no C++ and no libslurm beyond the SPANK calls.
 *
 * tm_task_init replaces the task with the launcher in its Slurm task mode
 * (execve, so it returns only on failure): trainmover-launch --slurm-task
 * --slot K | --standby-task -- ARGV..., with the task's own environment.
 * Tasks on the last `standby` nodes start as standbys; the others serve the
 * slot of their global task id, which needs the block distribution.
 *
 * tm_task_exit runs when a task ended: a launcher that exited 0 reported
 * its child itself; for any other end it runs trainmover-launch
 * --slurm-task --exit-report PID (bounded wait), which reports the child
 * the launcher left. Both return 0 or -1 (with a message logged).
 */
#ifndef TRAINMOVER_SPANK_TASK_SIDE_H
#define TRAINMOVER_SPANK_TASK_SIDE_H

#include <slurm/spank.h>

#include "spank_config.h"

int tm_task_init(spank_t sp, const struct tm_spank_config* config);
int tm_task_exit(spank_t sp, const struct tm_spank_config* config);

#endif
