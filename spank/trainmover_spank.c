/*
 * The TrainMover SPANK plugin: the entry points Slurm calls, and the option
 * table. Each entry point looks at spank_context() and hands its work on;
 * the settings themselves are parsed in spank_config.c.
 *
 * Plugin state: SPANK callbacks carry no user pointer, so the settings of
 * this srun or slurmstepd live in one file-scope struct, written only from
 * Slurm's (single) plugin thread during option processing and init.
 *
 * Every message starts with "trainmover: ". Entry points return 0 or -1;
 * a -1 from an option callback or from init makes srun refuse the step.
 */
#include <slurm/slurm.h>
#include <slurm/spank.h>
#include <stdio.h>

#include "local_side.h"
#include "spank_config.h"
#include "task_side.h"

SPANK_PLUGIN(trainmover, 1);

#ifndef TM_DEFAULT_LAUNCHER
#define TM_DEFAULT_LAUNCHER "trainmover-launch"
#endif
#ifndef TM_DEFAULT_SRUN_LIB
#define TM_DEFAULT_SRUN_LIB "libtrainmover-srun.so"
#endif

static struct tm_spank_config config;

/* The option each table entry sets, by the name spank_config.c knows. */
static const char* const option_names[] = {"",          "standby", "record-steps",
                                           "trace-dir", "events",  "heartbeat"};

static int on_option(int val, const char* optarg, int remote);

static struct spank_option options[] = {
    {"trainmover", NULL,
     "Run the step under TrainMover: a failed or drained node's ranks move to a standby node "
     "while the job goes on (needs --no-kill --kill-on-bad-exit=0).",
     0, 0, on_option},
    {"trainmover-standby", "N", "The last N nodes of the step are standbys (default 0).", 1, 1,
     on_option},
    {"trainmover-record-steps", "K",
     "Steps recorded for the standbys' warm-up; 0: no recording (default 2).", 1, 2, on_option},
    {"trainmover-trace-dir", "DIR", "Directory of the recorded traces, shared by the nodes.", 1, 3,
     on_option},
    {"trainmover-events", "FILE", "Write every event as a JSON line to FILE.", 1, 4, on_option},
    {"trainmover-heartbeat", "SEC", "Heartbeat interval, e.g. 1, 0.5s, 250ms (default 1 s).", 1, 5,
     on_option},
    SPANK_OPTIONS_TABLE_END};

static int on_option(int val, const char* optarg, int remote) {
  (void)remote;
  char err[256];
  if (val < 0 || (size_t)val >= sizeof option_names / sizeof option_names[0]) return -1;
  if (tm_spank_config_set_option(&config, option_names[val], optarg, err, sizeof err) != 0) {
    slurm_error("trainmover: %s", err);
    return -1;
  }
  return 0;
}

static int register_options(spank_t sp) {
  for (struct spank_option* o = options; o->name; ++o) {
    if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
      slurm_error("trainmover: cannot register option --%s", o->name);
      return -1;
    }
  }
  return 0;
}

int slurm_spank_init(spank_t sp, int ac, char** av) {
  char err[256];
  tm_spank_config_defaults(&config, TM_DEFAULT_LAUNCHER);
  snprintf(config.srun_lib, sizeof config.srun_lib, "%s", TM_DEFAULT_SRUN_LIB);
  if (tm_spank_config_parse_args(&config, ac, av, err, sizeof err) != 0) {
    slurm_error("trainmover: %s", err);
    return -1;
  }
  switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_REMOTE:
    case S_CTX_ALLOCATOR:
      return register_options(sp);
    default:
      return 0;
  }
}

/* srun, once the step's nodes are known: the coordinator for the step
 * (local_side.h), or a refusal of a step it cannot serve. */
int slurm_spank_local_user_init(spank_t sp, int ac, char** av) {
  (void)ac;
  (void)av;
  if (!config.enabled) return 0;
  slurm_verbose("trainmover: %d standby, heartbeat %g s, %d recorded steps", config.standby,
                config.heartbeat_s, config.record_steps);
  return tm_local_start(sp, &config);
}

/* In slurmstepd, in the task just before it execs: the task runs under the
 * launcher instead (task_side.h). */
int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  (void)ac;
  (void)av;
  if (!config.enabled || !spank_remote(sp)) return 0;
  return tm_task_init(sp, &config);
}

int slurm_spank_task_exit(spank_t sp, int ac, char** av) {
  (void)ac;
  (void)av;
  if (!config.enabled || !spank_remote(sp)) return 0;
  return tm_task_exit(sp, &config);
}

/* srun, once the step ended: the coordinator goes with it. */
int slurm_spank_exit(spank_t sp, int ac, char** av) {
  (void)sp;
  (void)ac;
  (void)av;
  if (spank_context() == S_CTX_LOCAL) tm_local_stop();
  return 0;
}
