// A rank forked by pmix_event_test's PMIx server that runs the real worker
// (tm_worker_init) with TRAINMOVER_PMIX_EVENTS=1, the other TRAINMOVER_*
// variables from the test: it serves slot PMIX_RANK as an active rank,
// registering with the test's coordinator under that task, and prints
//   worker slot=R pid=P
// then idles, heartbeating, until the test kills it (20 s at most). The PMIx
// events the server delivers reach the coordinator through the worker.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "trainmover/trainmover.h"

int main() {
  const char* rank = std::getenv("PMIX_RANK");
  if (rank == nullptr) return 2;
  setenv("TRAINMOVER_SLOT", rank, 1);
  tm_worker_t worker = nullptr;
  if (tm_worker_init(&worker) != TM_SUCCESS) {
    std::printf("error %s\n", tm_get_last_error());
    return 2;
  }
  std::printf("worker slot=%s pid=%d\n", rank, static_cast<int>(getpid()));
  std::fflush(stdout);
  sleep(20);
  tm_worker_destroy(worker);
  return 0;
}
