/*
 * srun's watch over the step's nodes: a thread that polls their states
 * through libslurm (node_watch.h) every `poll_s` and asks the coordinator
 * to migrate, planned, every slot of a node that is drained, or that a
 * maintenance reservation will take within TM_MAINT_LEAD_S. Each node is
 * migrated once. The node is not given back to Slurm (node_release.h):
 * on 22.05 that ends srun with status 137 (docs/slurm.md).
 *
 * `migrate` and `hosts` are the srun library's tm_srun_migrate_host and
 * tm_srun_slot_hosts. start returns 0 or -1; stop joins the thread.
 */
#ifndef TRAINMOVER_SPANK_DRAIN_WATCH_H
#define TRAINMOVER_SPANK_DRAIN_WATCH_H

#include <stddef.h>

#include "launcher/srun_side.h"

/* A maintenance window this close (seconds) moves the node's ranks away. */
#define TM_MAINT_LEAD_S 600

struct tm_drain_calls {
  struct tm_srun* srun;
  int (*migrate)(struct tm_srun*, const char*, char*, size_t);
  int (*hosts)(struct tm_srun*, char*, size_t);
};

int tm_drain_watch_start(const struct tm_drain_calls* calls, double poll_s);
void tm_drain_watch_stop(void);

#endif
