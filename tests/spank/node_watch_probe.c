/* Polls the states of NODE... through tm_node_watch_poll every INTERVAL_MS
 * for SECONDS and prints a line whenever a node's state changes:
 *   NODE drain=0|1 down=0|1 reason=TEXT maint=NAME|- maint_in=SECONDS
 * Exit status: 0, 2 on bad usage, 1 when slurmctld cannot be asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "spank/node_watch.h"

static void describe(const struct tm_node_status* n, time_t now, char* out, size_t size) {
  long in = n->maint_start ? (long)(n->maint_start - now) : 0;
  snprintf(out, size, "%s drain=%d down=%d reason=%s maint=%s maint_in=%ld", n->name, n->draining,
           n->down, n->reason[0] ? n->reason : "-", n->maint_name[0] ? n->maint_name : "-",
           in > 0 ? in : 0);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: node_watch_probe INTERVAL_MS SECONDS NODE...\n");
    return 2;
  }
  long interval_ms = atol(argv[1]);
  long seconds = atol(argv[2]);
  size_t count = (size_t)(argc - 3);
  if (interval_ms < 10 || seconds < 1 || count > 64) {
    fprintf(stderr, "node_watch_probe: INTERVAL_MS >= 10, SECONDS >= 1, at most 64 nodes\n");
    return 2;
  }
  slurm_init(NULL);
  struct tm_node_status nodes[64];
  char last[64][512];
  memset(nodes, 0, sizeof nodes);
  memset(last, 0, sizeof last);
  for (size_t i = 0; i < count; ++i)
    snprintf(nodes[i].name, sizeof nodes[i].name, "%s", argv[3 + i]);
  time_t end = time(NULL) + seconds;
  while (time(NULL) < end) {
    char err[256];
    if (tm_node_watch_poll(nodes, count, err, sizeof err) != 0) {
      fprintf(stderr, "node_watch_probe: %s\n", err);
      return 1;
    }
    time_t now = time(NULL);
    for (size_t i = 0; i < count; ++i) {
      char line[512];
      describe(&nodes[i], now, line, sizeof line);
      /* maint_in counts down: a change of it alone is not news. */
      char* cut = strstr(line, " maint_in=");
      size_t same = cut ? (size_t)(cut - line) : strlen(line);
      if (strncmp(line, last[i], same) != 0 || last[i][same] != ' ') {
        printf("%s\n", line);
        fflush(stdout);
        snprintf(last[i], sizeof last[i], "%s", line);
      }
    }
    usleep((useconds_t)interval_ms * 1000);
  }
  slurm_fini();
  return 0;
}
