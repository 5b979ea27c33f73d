/* The plugin in slurmstepd: each task under the launcher (task_side.h). */
#include "task_side.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

/* How long slurmstepd waits for the exit report helper. */
#define TM_REPORT_WAIT_MS 5000

/* Arguments before the task's own argv. */
#define TM_LAUNCH_ARGS 6

static int get_u32(spank_t sp, spank_item_t item, const char* what, uint32_t* out) {
  if (spank_get_item(sp, item, out) != ESPANK_SUCCESS) {
    slurm_error("trainmover: cannot learn the %s", what);
    return -1;
  }
  return 0;
}

int tm_task_init(spank_t sp, const struct tm_spank_config* config) {
  uint32_t nodeid = 0, nnodes = 0, taskid = 0;
  if (get_u32(sp, S_JOB_NODEID, "node id", &nodeid) ||
      get_u32(sp, S_JOB_NNODES, "node count", &nnodes) ||
      get_u32(sp, S_TASK_GLOBAL_ID, "task id", &taskid))
    return -1;
  int argc = 0;
  char** argv = NULL;
  char** env = NULL;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || argc < 1) {
    slurm_error("trainmover: cannot learn the task's argv and environment");
    return -1;
  }
  char nslots_text[32] = "";
  if (spank_getenv(sp, "TRAINMOVER_NSLOTS", nslots_text, sizeof nslots_text) != ESPANK_SUCCESS) {
    slurm_error("trainmover: TRAINMOVER_NSLOTS is not set: srun did not start the coordinator");
    return -1;
  }
  const long nslots = strtol(nslots_text, NULL, 10);
  const int standby = nodeid + (uint32_t)config->standby >= nnodes;
  if (!standby && (long)taskid >= nslots) {
    slurm_error(
        "trainmover: task %u on active node %u is beyond the %ld slots: TrainMover needs "
        "the block distribution (-m block) and the same task count on every node",
        taskid, nodeid, nslots);
    return -1;
  }
  char slot[16];
  snprintf(slot, sizeof slot, "%u", taskid);
  char** args = calloc((size_t)argc + TM_LAUNCH_ARGS + 1, sizeof *args);
  if (!args) return -1;
  int n = 0;
  args[n++] = (char*)config->launcher;
  args[n++] = "--slurm-task";
  if (standby) {
    args[n++] = "--standby-task";
  } else {
    args[n++] = "--slot";
    args[n++] = slot;
  }
  args[n++] = "--";
  for (int i = 0; i < argc; ++i) args[n++] = argv[i];
  args[n] = NULL;
  execve(config->launcher, args, env);
  slurm_error("trainmover: cannot run the launcher %s: %s (set launcher= in plugstack.conf)",
              config->launcher, strerror(errno));
  free(args);
  return -1;
}

/* Waits up to TM_REPORT_WAIT_MS for `pid`; kills it after that. */
static int wait_bounded(pid_t pid) {
  int status = 0;
  for (int waited = 0; waited < TM_REPORT_WAIT_MS; waited += 10) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r < 0 && errno != EINTR) return -1;
    struct timespec ten_ms = {0, 10 * 1000 * 1000};
    nanosleep(&ten_ms, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

int tm_task_exit(spank_t sp, const struct tm_spank_config* config) {
  int status = 0;
  pid_t pid = 0;
  char** env = NULL;
  if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS)
    return 0;                                                  /* nothing to report with */
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0; /* the launcher reported */
  char pid_text[16], status_text[16];
  snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
  snprintf(status_text, sizeof status_text, "%d", status & 0xffff);
  char* args[] = {(char*)config->launcher,
                  "--slurm-task",
                  "--exit-report",
                  pid_text,
                  "--wait-status",
                  status_text,
                  NULL};
  pid_t child = fork();
  if (child < 0) {
    slurm_error("trainmover: fork for the exit report: %s", strerror(errno));
    return -1;
  }
  if (child == 0) {
    execve(config->launcher, args, env);
    _exit(127);
  }
  if (wait_bounded(child) != 0)
    slurm_verbose(
        "trainmover: no exit report for task pid %d (its launcher had reported, or "
        "left no child)",
        (int)pid);
  return 0;
}
