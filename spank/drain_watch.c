/* srun's drain and maintenance watch (drain_watch.h). */
#include "drain_watch.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "node_watch.h"

#define TM_WATCH_MAX_NODES 256

/* The one watch of this srun: started and stopped on Slurm's plugin
 * thread; `stopping` is the only field both threads touch (under lock). */
static struct {
  struct tm_drain_calls calls;
  double poll_s;
  pthread_t thread;
  int started;
  int stopping;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  char moved[TM_WATCH_MAX_NODES][64]; /* nodes already migrated */
  size_t nmoved;
} watch = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static int already_moved(const char* node) {
  for (size_t i = 0; i < watch.nmoved; ++i)
    if (strcmp(watch.moved[i], node) == 0) return 1;
  return 0;
}

/* Why `n` must be left now, or NULL. */
static const char* leave_reason(const struct tm_node_status* n, time_t now, char* buf, size_t len) {
  if (n->draining) {
    snprintf(buf, len, "drained (%s)", n->reason[0] ? n->reason : "no reason given");
    return buf;
  }
  if (n->maint_start != 0 && n->maint_start - now <= TM_MAINT_LEAD_S) {
    snprintf(buf, len, "maintenance reservation %s starts in %ld s", n->maint_name,
             (long)(n->maint_start - now));
    return buf;
  }
  return NULL;
}

static void poll_once(void) {
  char list[TM_WATCH_MAX_NODES * 16];
  if (watch.calls.hosts(watch.calls.srun, list, sizeof list) <= 0) return;
  struct tm_node_status nodes[TM_WATCH_MAX_NODES];
  size_t count = 0;
  for (char *save = NULL, *h = strtok_r(list, ",", &save); h && count < TM_WATCH_MAX_NODES;
       h = strtok_r(NULL, ",", &save)) {
    memset(&nodes[count], 0, sizeof nodes[count]);
    snprintf(nodes[count].name, sizeof nodes[count].name, "%s", h);
    ++count;
  }
  char err[256];
  if (tm_node_watch_poll(nodes, count, err, sizeof err) != 0) {
    slurm_verbose("trainmover: node states: %s", err);
    return;
  }
  const time_t now = time(NULL);
  for (size_t i = 0; i < count; ++i) {
    char why[400];
    if (!nodes[i].found || already_moved(nodes[i].name) ||
        !leave_reason(&nodes[i], now, why, sizeof why))
      continue;
    int asked = watch.calls.migrate(watch.calls.srun, nodes[i].name, err, sizeof err);
    if (asked <= 0) {
      slurm_info("trainmover: node %s %s; no migration yet: %s", nodes[i].name, why,
                 asked < 0 ? err : "a recovery is running");
      continue; /* asked again at the next poll */
    }
    slurm_info("trainmover: node %s %s: migrating its %d slot(s) to standbys", nodes[i].name, why,
               asked);
    if (watch.nmoved < TM_WATCH_MAX_NODES)
      snprintf(watch.moved[watch.nmoved++], sizeof watch.moved[0], "%s", nodes[i].name);
  }
}

static void* run(void* arg) {
  (void)arg;
  pthread_mutex_lock(&watch.lock);
  while (!watch.stopping) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    const long ns = (long)(watch.poll_s * 1e9);
    until.tv_sec += ns / 1000000000L + (until.tv_nsec + ns % 1000000000L) / 1000000000L;
    until.tv_nsec = (until.tv_nsec + ns % 1000000000L) % 1000000000L;
    pthread_cond_timedwait(&watch.wake, &watch.lock, &until);
    if (watch.stopping) break;
    pthread_mutex_unlock(&watch.lock);
    poll_once();
    pthread_mutex_lock(&watch.lock);
  }
  pthread_mutex_unlock(&watch.lock);
  return NULL;
}

int tm_drain_watch_start(const struct tm_drain_calls* calls, double poll_s) {
  watch.calls = *calls;
  watch.poll_s = poll_s;
  watch.stopping = 0;
  watch.nmoved = 0;
  if (pthread_create(&watch.thread, NULL, run, NULL) != 0) {
    slurm_error("trainmover: cannot start the node-state thread");
    return -1;
  }
  watch.started = 1;
  return 0;
}

void tm_drain_watch_stop(void) {
  if (!watch.started) return;
  pthread_mutex_lock(&watch.lock);
  watch.stopping = 1;
  pthread_cond_signal(&watch.wake);
  pthread_mutex_unlock(&watch.lock);
  pthread_join(watch.thread, NULL);
  watch.started = 0;
}
