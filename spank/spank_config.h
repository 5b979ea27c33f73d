/*
 * The plugin's settings: one struct filled from plugstack.conf arguments
 * (defaults for the site) and then from srun's --trainmover-* options.
 *
 * Pure C with no Slurm dependency, so it is unit-tested on its own. Every
 * parser writes a message naming the offending option or key and value into
 * `err` (at most `errlen` bytes, always terminated) and returns -1; on
 * success it returns 0 and changes only the field it parses, so a failed
 * call leaves the config as it was. Parsing the same value twice is
 * harmless (Slurm calls option callbacks more than once).
 */
#ifndef TRAINMOVER_SPANK_CONFIG_H
#define TRAINMOVER_SPANK_CONFIG_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds that mean something; anything outside is refused. */
#define TM_SPANK_MAX_STANDBY 4096
#define TM_SPANK_MAX_RECORD_STEPS 10000
#define TM_SPANK_MIN_HEARTBEAT_S 0.01
#define TM_SPANK_MAX_HEARTBEAT_S 600.0
#define TM_SPANK_PATH_MAX 4096
#define TM_SPANK_MIN_POLL_S 0.05
#define TM_SPANK_MAX_POLL_S 3600.0

struct tm_spank_config {
  int enabled;                       /* --trainmover, or any other --trainmover-* option */
  int standby;                       /* the last `standby` nodes of the step are standbys */
  int record_steps;                  /* steps recorded for the standbys' warm-up; 0: off */
  double heartbeat_s;                /* heartbeat interval; a rank is lost after a few */
  char trace_dir[TM_SPANK_PATH_MAX]; /* "" : the launcher's default */
  char events[TM_SPANK_PATH_MAX];    /* JSON-lines event log; "": none */
  char launcher[TM_SPANK_PATH_MAX];  /* trainmover-launch to run each task under */
  char srun_lib[TM_SPANK_PATH_MAX];  /* libtrainmover-srun.so; "": the installed one */
  char bind[64];                     /* address srun's coordinator listens on; "": by interface */
  double poll_s;                     /* node-state poll interval in srun (drains, maint) */
};

/* Fills the built-in defaults (disabled, no standby, 2 recorded steps,
 * 1 s heartbeat, the installed launcher). */
void tm_spank_config_defaults(struct tm_spank_config* config, const char* default_launcher);

/* One user option by its name without the "trainmover" prefix: "" (the
 * --trainmover flag itself, value ignored), "standby", "record-steps",
 * "trace-dir", "events", "heartbeat". Any of them enables the plugin. */
int tm_spank_config_set_option(struct tm_spank_config* config, const char* name, const char* value,
                               char* err, size_t errlen);

/* plugstack.conf arguments "key=value": enabled=0|1, standby=N,
 * record_steps=K, trace_dir=DIR, events=FILE, heartbeat=SEC, launcher=PATH,
 * srun_lib=PATH, bind=ADDRESS, poll=SEC.
 * An unknown key or a value out of range is an error naming it; parsing
 * stops at the first error. */
int tm_spank_config_parse_args(struct tm_spank_config* config, int argc, char** argv, char* err,
                               size_t errlen);

/* Checks what needs the step's size: at least one active node is left
 * after the standbys. */
int tm_spank_config_check_nodes(const struct tm_spank_config* config, unsigned nnodes, char* err,
                                size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
