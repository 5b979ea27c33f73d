/*
 * The states of the step's nodes as slurmctld sees them, through libslurm
 * (slurm_load_node, slurm_load_reservations), for the srun side: a node an
 * administrator drains, or that a maintenance reservation is about to take,
 * has its ranks migrated to standbys before it goes.
 *
 * Runs where libslurm is initialised (inside srun, or a program that called
 * slurm_init). Each poll is two RPCs to slurmctld, bounded by Slurm's
 * MessageTimeout; call it at a modest interval (the runtime's default is
 * 5 s). Not thread-safe against itself: one poller at a time.
 */
#ifndef TRAINMOVER_SPANK_NODE_WATCH_H
#define TRAINMOVER_SPANK_NODE_WATCH_H

#include <stddef.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tm_node_status {
  char name[64];       /* in: the node's Slurm name */
  int found;           /* out: slurmctld knows the node */
  int draining;        /* out: DRAIN set (draining or drained) */
  int down;            /* out: DOWN, or FAIL set */
  char reason[256];    /* out: the administrator's reason, "" when none */
  time_t maint_start;  /* out: start of the earliest maintenance reservation
                          that covers the node and has not ended; 0: none */
  char maint_name[64]; /* out: that reservation's name */
};

/* Fills the out fields of `nodes[0..count)`. Returns 0, or -1 with a
 * message in `err` when slurmctld cannot be asked (the fields are then
 * unchanged). */
int tm_node_watch_poll(struct tm_node_status* nodes, size_t count, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
