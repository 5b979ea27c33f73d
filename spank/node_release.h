/*
 * Giving a node back to Slurm while the step runs: once the ranks of a
 * drained node have moved to a standby, the job shrinks to its other nodes
 * (as `scontrol update jobid=J nodelist=...` does). Slurm then kills what
 * still runs on the node and the step goes on with the rest (checked on
 * Slurm 22.05 with srun --no-kill --kill-on-bad-exit=0).
 *
 * Runs where libslurm is initialised. Bounded by Slurm's MessageTimeout.
 */
#ifndef TRAINMOVER_SPANK_NODE_RELEASE_H
#define TRAINMOVER_SPANK_NODE_RELEASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shrinks job `job_id` to all its nodes but `node`. Returns 0, or -1 with a
 * message in `err`: the job or node is unknown, the node is the job's last,
 * or slurmctld refused (e.g. not permitted for this user). */
int tm_job_release_node(uint32_t job_id, const char* node, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
