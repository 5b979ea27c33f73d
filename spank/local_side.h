/*
 * The plugin's work in srun (local context): the job's coordinator and
 * store for the life of the step. The C++ runtime stays out of the plugin:
 * libtrainmover-srun.so (launcher/srun_side.h) is dlopened here, in srun
 * only, and runs them in threads of its own.
 *
 * tm_local_start (slurm_spank_local_user_init) checks the step's shape,
 * starts them and puts the job's TRAINMOVER_* variables (the coordinator's
 * address, the store, the job id, the per-job secret, the slot count, the
 * warm-up settings) into the job environment with spank_setenv.
 * tm_local_stop (slurm_spank_exit) stops them. Both log what went wrong and
 * return -1 on failure (srun then refuses the step).
 */
#ifndef TRAINMOVER_SPANK_LOCAL_SIDE_H
#define TRAINMOVER_SPANK_LOCAL_SIDE_H

#include <slurm/spank.h>

#include "spank_config.h"

int tm_local_start(spank_t sp, const struct tm_spank_config* config);
void tm_local_stop(void);

#endif
