/* The membership switch through the C API, run as 5 processes of a local
 * job: processes 0-3 serve the 4 slots of the communicator, process 4 is a
 * standby. After 3 allreduces slot 1 is replaced (planned): the standby
 * joins, the others prepare and switch over at the same point, the leaver
 * leaves, and 3 more allreduces must give exact results. Exit 0 on success. */
#include <stdio.h>
#include <string.h>
#include <trainmover/trainmover.h>

#define EXPECT(cond)                                              \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "line %d: %s is false\n", __LINE__, #cond); \
      return 1;                                                   \
    }                                                             \
  } while (0)

#define CHECK(call)                                                                                \
  do {                                                                                             \
    tm_result_t r_ = (call);                                                                       \
    if (r_ != TM_SUCCESS) {                                                                        \
      fprintf(stderr, "%s failed: %s: %s\n", #call, tm_get_error_string(r_), tm_get_last_error()); \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

enum { kSlots = 4, kVictim = 1, kCount = 5000, kBefore = 3, kAfter = 3 };

/* Every slot contributes slot+1+iteration+i; the sum is exact in float. */
static int iterate(tm_comm_t comm, int slot, int iteration) {
  static float in[kCount], out[kCount];
  for (int i = 0; i < kCount; ++i) in[i] = (float)(slot + 1 + iteration + i % 7);
  CHECK(tm_allreduce(in, out, kCount, TM_FLOAT32, TM_SUM, comm));
  for (int i = 0; i < kCount; ++i) {
    float want = (float)(kSlots * (kSlots + 1) / 2 + kSlots * (iteration + i % 7));
    if (out[i] != want) {
      fprintf(stderr, "slot %d iteration %d: element %d is %g, expected %g\n", slot, iteration, i,
              (double)out[i], (double)want);
      return 1;
    }
  }
  return 0;
}

int main(void) {
  tm_config_t config = TM_CONFIG_INITIALIZER;
  tm_comm_t comm = NULL;
  uint64_t epoch = 99;
  int process, slot = -1;
  CHECK(tm_config_init(&config));
  process = config.slot;
  config.nslots = kSlots; /* the launcher started one process more: the standby */
  if (process == kSlots) {
    CHECK(tm_comm_init_standby(&comm, &config));
    CHECK(tm_comm_slot(comm, &slot));
    EXPECT(slot == -1 && tm_barrier(comm) != TM_SUCCESS); /* serves no slot yet */
    CHECK(tm_comm_join(comm, 1, kVictim));
    CHECK(tm_comm_switchover(comm, 1));
  } else {
    CHECK(tm_comm_init(&comm, &config));
    for (int it = 0; it < kBefore; ++it) {
      if (iterate(comm, process, it)) return 1;
    }
    CHECK(tm_comm_prepare_switch(comm, 1));
    CHECK(tm_comm_wait_prepared(comm));
    CHECK(tm_comm_switchover(comm, 1));
    if (process == kVictim) { /* the leaver is out */
      EXPECT(tm_barrier(comm) != TM_SUCCESS);
      CHECK(tm_comm_destroy(comm));
      return 0;
    }
  }
  CHECK(tm_comm_epoch(comm, &epoch));
  CHECK(tm_comm_slot(comm, &slot));
  EXPECT(epoch == 1 && (process != kSlots || slot == kVictim));
  for (int it = kBefore; it < kBefore + kAfter; ++it) {
    if (iterate(comm, slot, it)) return 1;
  }
  /* Bad calls are errors, not crashes. */
  EXPECT(tm_comm_switchover(comm, 7) == TM_ERROR_INVALID_ARGUMENT);
  EXPECT(tm_comm_join(comm, 2, 0) == TM_ERROR_INVALID_ARGUMENT);
  EXPECT(tm_comm_switchover(NULL, 1) == TM_ERROR_INVALID_ARGUMENT);
  CHECK(tm_comm_destroy(comm));
  return 0;
}
