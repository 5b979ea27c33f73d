/* tm_config_t across header versions, from C, as one rank of a local job
 * (trainmover-launch sets TRAINMOVER_* for it). A program built against an
 * older trainmover.h passes a shorter struct: here the header as it was
 * before record_reserve_bytes was added. The library must write and read
 * only that struct's bytes (a canary of 0xff bytes follows it: read as
 * record_reserve_bytes it would be refused as too large), give the missing
 * field its default or its TRAINMOVER_* value, and refuse header fields
 * that no header could have written, naming them. Exit 0 on success. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trainmover/trainmover.h>
#include <unistd.h>

/* tm_config_t of the older header. */
typedef struct {
  size_t struct_size;
  unsigned int magic;
  unsigned int version;
  int slot;
  int nslots;
  uint64_t job_id;
  const char* job_secret;
  const char* store_address;
  const char* listen_address;
  const char* listen_interface;
  const char* name;
  double timeout_s;
  double connect_timeout_s;
  double heartbeat_interval_s;
  size_t segment_bytes;
  size_t socket_buffer_bytes;
  int staging_buffers;
  int record_iterations;
  const char* trace_dir;
  int trace_compress;
  const char* role;
} older_config_t;

/* Its TM_CONFIG_INITIALIZER. */
#define OLDER_CONFIG_INITIALIZER                                                                 \
  {                                                                                              \
    sizeof(older_config_t), TM_CONFIG_MAGIC, 1, -1, 0, 0, NULL, NULL, NULL, NULL, "world", 30.0, \
        60.0, 0.5, (size_t)512 << 10, (size_t)4 << 20, 4, 2, NULL, 0, NULL                       \
  }

struct guarded_config {
  older_config_t config;
  unsigned char canary[64];
};

static void reset(struct guarded_config* g) {
  older_config_t fresh = OLDER_CONFIG_INITIALIZER;
  memset(g, 0xff, sizeof *g);
  g->config = fresh;
}

static int canary_intact(const struct guarded_config* g) {
  for (size_t i = 0; i < sizeof g->canary; ++i) {
    if (g->canary[i] != 0xff) {
      fprintf(stderr, "tm_config_init wrote past the caller's struct (byte %zu)\n", i);
      return 0;
    }
  }
  return 1;
}

static tm_config_t* as_config(struct guarded_config* g) { return (tm_config_t*)(void*)&g->config; }

/* `call` failed with TM_ERROR_INVALID_ARGUMENT and a message naming `field`. */
static int refused(tm_result_t got, const char* what, const char* field) {
  if (got != TM_ERROR_INVALID_ARGUMENT) {
    fprintf(stderr, "%s: got %s, expected TM_ERROR_INVALID_ARGUMENT\n", what,
            tm_get_error_string(got));
    return 1;
  }
  if (strstr(tm_get_last_error(), field) == NULL) {
    fprintf(stderr, "%s: the error does not name %s: %s\n", what, field, tm_get_last_error());
    return 1;
  }
  return 0;
}

static int older_struct_works(void) {
  struct guarded_config g;
  tm_comm_t comm = NULL;
  double value = 1.0;
  reset(&g);
  if (tm_config_init(as_config(&g)) != TM_SUCCESS) {
    fprintf(stderr, "tm_config_init(older struct): %s\n", tm_get_last_error());
    return 1;
  }
  if (!canary_intact(&g)) return 1;
  if (g.config.struct_size != sizeof(older_config_t) || g.config.version != 1 ||
      g.config.nslots != 1 || g.config.store_address == NULL || g.config.job_secret == NULL) {
    fprintf(stderr, "tm_config_init did not fill the older struct from the environment\n");
    return 1;
  }
  if (tm_comm_init(&comm, as_config(&g)) != TM_SUCCESS) {
    fprintf(stderr, "tm_comm_init(older struct): %s\n", tm_get_last_error());
    return 1;
  }
  if (tm_allreduce(&value, &value, 1, TM_FLOAT64, TM_SUM, comm) != TM_SUCCESS || value != 1.0) {
    fprintf(stderr, "allreduce on the older struct's communicator: %s\n", tm_get_last_error());
    return 1;
  }
  tm_comm_destroy(comm);
  return 0;
}

/* The field the older header lacks takes TRAINMOVER_RECORD_RESERVE: a
 * reserve beyond a quarter of memory is refused, naming that field. */
static int missing_field_takes_the_environment(void) {
  struct guarded_config g;
  tm_comm_t comm = NULL;
  char bytes[32];
  unsigned long long physical =
      (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGESIZE);
  int failed;
  reset(&g);
  if (tm_config_init(as_config(&g)) != TM_SUCCESS) return 1;
  snprintf(bytes, sizeof bytes, "%llu", physical / 2);
  setenv("TRAINMOVER_RECORD_RESERVE", bytes, 1);
  failed = refused(tm_comm_init(&comm, as_config(&g)), "older struct, huge reserve",
                   "record_reserve_bytes");
  unsetenv("TRAINMOVER_RECORD_RESERVE");
  if (comm != NULL) tm_comm_destroy(comm);
  return failed;
}

static int bad_headers_are_refused(void) {
  struct guarded_config g;
  tm_comm_t comm = NULL;
  int failed = 0;
  reset(&g);
  g.config.magic = 0;
  failed |= refused(tm_config_init(as_config(&g)), "no magic", "magic");
  failed |= refused(tm_comm_init(&comm, as_config(&g)), "no magic (tm_comm_init)", "magic");
  failed |= !canary_intact(&g);
  reset(&g);
  g.config.version = TM_CONFIG_VERSION + 1;
  failed |= refused(tm_config_init(as_config(&g)), "newer version", "version");
  reset(&g);
  g.config.struct_size = sizeof(tm_config_t) + 8;
  failed |= refused(tm_config_init(as_config(&g)), "larger struct", "struct_size");
  failed |=
      refused(tm_comm_init(&comm, as_config(&g)), "larger struct (tm_comm_init)", "struct_size");
  reset(&g);
  g.config.struct_size = sizeof(older_config_t) - 4;
  failed |= refused(tm_config_init(as_config(&g)), "size inside a field", "struct_size");
  reset(&g);
  g.config.struct_size = 8;
  failed |= refused(tm_config_init(as_config(&g)), "size of the header's first field only",
                    "struct_size");
  failed |= !canary_intact(&g);
  return failed;
}

int main(void) {
  int failed = 0;
  failed |= older_struct_works();
  failed |= missing_field_takes_the_environment();
  failed |= bad_headers_are_refused();
  return failed;
}
