/* The C API from C: run as each rank of a local job (trainmover-launch sets
 * TRAINMOVER_* for it). Checks collectives through the installed-style
 * shared library, and the error reporting of bad calls. Exit 0 on success. */
#include <stdio.h>
#include <string.h>
#include <trainmover/trainmover.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    tm_result_t r_ = (call);                                                                       \
    if (r_ != TM_SUCCESS) {                                                                        \
      fprintf(stderr, "%s failed: %s: %s\n", #call, tm_get_error_string(r_), tm_get_last_error()); \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static int expect_error(tm_result_t got, tm_result_t want, const char* what) {
  if (got != want) {
    fprintf(stderr, "%s: got %s, expected %s\n", what, tm_get_error_string(got),
            tm_get_error_string(want));
    return 1;
  }
  if (strlen(tm_get_last_error()) == 0) {
    fprintf(stderr, "%s: no error detail\n", what);
    return 1;
  }
  return 0;
}

int main(void) {
  tm_config_t config = TM_CONFIG_INITIALIZER;
  tm_comm_t comm = NULL;
  int slot = -1, nslots = 0, failed = 0;
  CHECK(tm_config_init(&config));
  CHECK(tm_comm_init(&comm, &config));
  CHECK(tm_comm_slot(comm, &slot));
  CHECK(tm_comm_nslots(comm, &nslots));
  if (slot != config.slot || nslots != config.nslots) return 1;

  double values[1000];
  for (int i = 0; i < 1000; ++i) values[i] = slot + 1;
  CHECK(tm_allreduce(values, values, 1000, TM_FLOAT64, TM_SUM, comm));
  for (int i = 0; i < 1000; ++i) {
    if (values[i] != nslots * (nslots + 1) / 2.0) return 2;
  }
  int block[2] = {slot, 10 * slot};
  int all[2 * 64];
  CHECK(tm_allgather(block, all, 2, TM_INT32, comm));
  for (int s = 0; s < nslots; ++s) {
    if (all[2 * s] != s || all[2 * s + 1] != 10 * s) return 3;
  }
  CHECK(tm_barrier(comm));

  failed |= expect_error(tm_allreduce(values, values, 10, (tm_datatype_t)99, TM_SUM, comm),
                         TM_ERROR_INVALID_ARGUMENT, "bad datatype");
  failed |= expect_error(tm_broadcast(values, values, 10, TM_FLOAT64, nslots, comm),
                         TM_ERROR_INVALID_ARGUMENT, "bad root");
  failed |= expect_error(tm_allreduce(values, values, 10, TM_FLOAT64, TM_SUM, NULL),
                         TM_ERROR_INVALID_ARGUMENT, "NULL communicator");
  tm_config_t broken = config;
  broken.slot = nslots;
  tm_comm_t none = NULL;
  failed |=
      expect_error(tm_comm_init(&none, &broken), TM_ERROR_INVALID_ARGUMENT, "slot out of range");
  if (strstr(tm_get_last_error(), "TRAINMOVER_SLOT") == NULL) {
    fprintf(stderr, "error does not name TRAINMOVER_SLOT: %s\n", tm_get_last_error());
    failed = 1;
  }
  CHECK(tm_comm_failed_slot(comm, &slot));

  /* tm_comm_abort: slot 0 aborts (twice) once every other slot has told it
   * that it is done with the calls above (an abort cancels what is in
   * flight, on every slot); then every slot's next collective fails with
   * TM_ERROR_ABORTED, slot 0's at once, the others' through the abort slot 0
   * sends them. Then destroy. */
  failed |= expect_error(tm_comm_abort(NULL), TM_ERROR_INVALID_ARGUMENT, "abort of NULL");
  if (strcmp(tm_get_error_string(TM_ERROR_ABORTED), "aborted") != 0) failed = 1;
  CHECK(tm_comm_slot(comm, &slot));
  int done = 1;
  if (slot == 0) {
    for (int s = 1; s < nslots; ++s) CHECK(tm_recv(&done, 1, TM_INT32, s, comm));
    CHECK(tm_comm_abort(comm));
    CHECK(tm_comm_abort(comm));
  } else {
    CHECK(tm_send(&done, 1, TM_INT32, 0, comm));
  }
  failed |= expect_error(tm_barrier(comm), TM_ERROR_ABORTED, "barrier after an abort");
  CHECK(tm_comm_destroy(comm));
  CHECK(tm_comm_destroy(NULL));
  return failed;
}
