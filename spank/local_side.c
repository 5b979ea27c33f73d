/* The plugin in srun: the coordinator through libtrainmover-srun.so. */
#include "local_side.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "drain_watch.h"
#include "launcher/srun_side.h"
#include "srun_flags.h"

/* The library's entry points, looked up by name. */
struct srun_lib {
  void* handle;
  struct tm_srun* (*start)(const struct tm_srun_config*, char*, size_t);
  const char* (*control_address)(const struct tm_srun*);
  const char* (*store_address)(const struct tm_srun*);
  const char* (*secret_hex)(const struct tm_srun*);
  const char* (*job_id)(const struct tm_srun*);
  int (*migrate_host)(struct tm_srun*, const char*, char*, size_t);
  int (*slot_hosts)(struct tm_srun*, char*, size_t);
  void (*stop)(struct tm_srun*);
};

/* This srun's step: one per srun process, written in local_user_init and
 * read in slurm_spank_exit, both on Slurm's plugin thread. */
static struct srun_lib lib;
static struct tm_srun* running;

static int load(const char* path) {
  lib.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    slurm_error("trainmover: cannot load %s: %s (set srun_lib= in plugstack.conf)", path,
                dlerror());
    return -1;
  }
#define TM_SYM(field, name)                                                         \
  do {                                                                              \
    *(void**)&lib.field = dlsym(lib.handle, name);                                  \
    if (!lib.field) {                                                               \
      slurm_error("trainmover: %s has no %s: a different TrainMover?", path, name); \
      return -1;                                                                    \
    }                                                                               \
  } while (0)
  TM_SYM(start, "tm_srun_start");
  TM_SYM(control_address, "tm_srun_control_address");
  TM_SYM(store_address, "tm_srun_store_address");
  TM_SYM(secret_hex, "tm_srun_secret_hex");
  TM_SYM(job_id, "tm_srun_job_id");
  TM_SYM(migrate_host, "tm_srun_migrate_host");
  TM_SYM(slot_hosts, "tm_srun_slot_hosts");
  TM_SYM(stop, "tm_srun_stop");
#undef TM_SYM
  return 0;
}

/* The slot count: the tasks of the active nodes, the same on every node. */
static int count_slots(spank_t sp, const struct tm_spank_config* config, unsigned* nslots) {
  uint32_t nnodes = 0, ntasks = 0;
  if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS) {
    slurm_error("trainmover: cannot learn the step's node and task counts");
    return -1;
  }
  char err[256];
  if (tm_spank_config_check_nodes(config, nnodes, err, sizeof err) != 0) {
    slurm_error("trainmover: %s", err);
    return -1;
  }
  if (ntasks % nnodes != 0) {
    slurm_error(
        "trainmover: %u tasks on %u nodes: every node must run the same number of tasks "
        "(use --ntasks-per-node)",
        ntasks, nnodes);
    return -1;
  }
  *nslots = ntasks / nnodes * (nnodes - (unsigned)config->standby);
  return 0;
}

/* spank_setenv is for slurmstepd only (ESPANK_NOT_REMOTE in srun); srun
 * builds the tasks' environment from its own after local_user_init, so a
 * setenv here reaches every task (checked on 22.05). */
static int set(spank_t sp, const char* name, const char* value) {
  (void)sp;
  if (setenv(name, value, 1) != 0) {
    slurm_error("trainmover: cannot set %s in the job environment", name);
    return -1;
  }
  return 0;
}

static int publish(spank_t sp, const struct tm_spank_config* config, unsigned nslots) {
  char nslots_text[16], record[16];
  snprintf(nslots_text, sizeof nslots_text, "%u", nslots);
  snprintf(record, sizeof record, "%d", config->record_steps);
  /* Warm-up replays traces the ranks record: only with a directory that
   * every node sees. */
  const int warm = config->trace_dir[0] != '\0' && config->record_steps > 0;
  if (set(sp, "TRAINMOVER_CONTROL", lib.control_address(running)) ||
      set(sp, "TRAINMOVER_STORE", lib.store_address(running)) ||
      set(sp, "TRAINMOVER_JOB_ID", lib.job_id(running)) ||
      set(sp, "TRAINMOVER_JOB_SECRET", lib.secret_hex(running)) ||
      set(sp, "TRAINMOVER_NSLOTS", nslots_text) ||
      set(sp, "TRAINMOVER_WARMUP", warm ? "replay" : "none") ||
      set(sp, "TRAINMOVER_TRACE_DIR", warm ? config->trace_dir : "") ||
      set(sp, "TRAINMOVER_RECORD_ITERATIONS", warm ? record : "0"))
    return -1;
  return 0;
}

int tm_local_start(spank_t sp, const struct tm_spank_config* config) {
  unsigned nslots = 0;
  if (count_slots(sp, config, &nslots) != 0) return -1;
  char why[256];
  int job_argc = 0;
  char** job_argv = NULL;
  if (spank_get_item(sp, S_JOB_ARGV, &job_argc, &job_argv) != ESPANK_SUCCESS) {
    slurm_error("trainmover: cannot read the step's program from SPANK (S_JOB_ARGV)");
    return -1;
  }
  if (tm_srun_flags_check(job_argc, why, sizeof why) != 0) {
    slurm_error("trainmover: %s", why);
    return -1;
  }
  if (load(config->srun_lib) != 0) return -1;
  struct tm_srun_config sc = {nslots, config->heartbeat_s, config->events,
                              config->bind[0] ? config->bind : NULL, 0};
  char err[512];
  running = lib.start(&sc, err, sizeof err);
  if (!running) {
    slurm_error("trainmover: cannot start the coordinator: %s", err);
    return -1;
  }
  if (publish(sp, config, nslots) != 0) return -1;
  struct tm_drain_calls calls = {running, lib.migrate_host, lib.slot_hosts};
  if (tm_drain_watch_start(&calls, config->poll_s) != 0) return -1;
  slurm_verbose("trainmover: coordinator at %s for %u slots, %d standby node(s)",
                lib.control_address(running), nslots, config->standby);
  return 0;
}

void tm_local_stop(void) {
  tm_drain_watch_stop();
  if (running) lib.stop(running);
  running = NULL;
  /* The library stays loaded: srun exits next, and its threads are gone. */
}
