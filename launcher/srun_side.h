/*
 * The srun side of a TrainMover step, behind a C interface: the job's
 * coordinator and rendezvous store, embedded in srun by the SPANK plugin.
 * The plugin is plain C and dlopens libtrainmover-srun.so (which holds the
 * C++ runtime) in srun only, so slurmstepd never loads it.
 *
 * Every function that can fail writes a message into `err` (at most
 * `errlen` bytes, always terminated) and returns NULL or -1. A handle is
 * used from any thread; tm_srun_stop ends it (every connection closes, the
 * ranks notice at once) and frees it.
 */
#ifndef TRAINMOVER_SRUN_SIDE_H
#define TRAINMOVER_SRUN_SIDE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tm_srun;

struct tm_srun_config {
  unsigned nslots;    /* active ranks: the slots */
  double heartbeat_s; /* clients' heartbeat interval; a peer is lost after 5 of them */
  const char* events; /* JSON-lines event log; NULL or "": none */
  const char* bind;   /* address to listen on; NULL or "": chosen by the
                         interface rule (TRAINMOVER_SOCKET_IFNAME, else the
                         first interface up that is not lo/docker/virbr) */
  int quiet;          /* nonzero: no event lines on stderr */
};

/* Starts the store and the coordinator (its own thread). */
struct tm_srun* tm_srun_start(const struct tm_srun_config* config, char* err, size_t errlen);

/* What every task needs, as the TRAINMOVER_* variables carry them. */
const char* tm_srun_control_address(const struct tm_srun* srun);
const char* tm_srun_store_address(const struct tm_srun* srun);
const char* tm_srun_secret_hex(const struct tm_srun* srun);
const char* tm_srun_job_id(const struct tm_srun* srun); /* decimal */

/* Planned migration of every slot served on `host` (a node name, as the
 * processes registered with TRAINMOVER_HOST); returns how many were asked
 * to move, -1 on error. A slot already moving is skipped. */
int tm_srun_migrate_host(struct tm_srun* srun, const char* host, char* err, size_t errlen);

/* The distinct hosts of the served slots, comma-separated, into `buf`
 * (always terminated); returns their count, -1 when the coordinator does
 * not answer. */
int tm_srun_slot_hosts(struct tm_srun* srun, char* buf, size_t len);

/* Slots now served on `host`; -1 when the coordinator does not answer. */
int tm_srun_slots_on_host(struct tm_srun* srun, const char* host);

/* Nonzero once the coordinator stopped the job (no standby came). */
int tm_srun_stopped(const struct tm_srun* srun);

/* Prints the summary line, stops everything, frees the handle (NULL: no-op). */
void tm_srun_stop(struct tm_srun* srun);

#ifdef __cplusplus
}
#endif

#endif
