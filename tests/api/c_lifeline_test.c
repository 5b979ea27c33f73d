/* A rank for c_lifeline_test.sh, in C through the shared library: it takes
 * the launcher's lifeline (tm_worker_init), then fills a large heap, so that
 * the kernel's teardown of it at exit takes tens of milliseconds, writes the
 * file $LIFELINE_TEST_READY and waits to be killed. A standby only waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trainmover/trainmover.h>
#include <unistd.h>

int main(void) {
  tm_worker_t worker = NULL;
  tm_worker_kind_t kind;
  if (tm_worker_init(&worker) != TM_SUCCESS || tm_worker_kind(worker, &kind) != TM_SUCCESS) {
    fprintf(stderr, "c_lifeline_test: %s\n", tm_get_last_error());
    return 1;
  }
  if (kind == TM_WORKER_ACTIVE) {
    const size_t bytes = (size_t)1 << 30;
    char* heap = malloc(bytes);
    const char* ready = getenv("LIFELINE_TEST_READY");
    if (heap == NULL || ready == NULL) return 1;
    memset(heap, 1, bytes);
    FILE* f = fopen(ready, "w");
    if (f == NULL) return 1;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
  }
  for (;;) pause();
}
