/*
 * TrainMover C API: a slot-addressed collective communicator.
 *
 * A communicator serves one *slot* (logical rank) of a job of `nslots` slots.
 * Every result depends only on slot numbers, never on which process serves a
 * slot: reductions run in an order fixed by the slots, so results are bitwise
 * reproducible from run to run.
 *
 * Conventions (NCCL-like):
 *  - every function returns a tm_result_t; TM_SUCCESS is 0;
 *  - tm_get_error_string() names a code; tm_get_last_error() gives the detail
 *    of the last failed call made by the calling thread;
 *  - handles are opaque; a communicator may be used by one thread at a time;
 *  - calls block until the operation is complete or has failed; every wait is
 *    bounded by the communicator's timeouts.
 *
 * Failures: when a peer dies, hangs or sends bad data, the operation in flight
 * returns an error naming the slot at fault (tm_comm_failed_slot()), and every
 * later operation on that communicator returns the same error. The
 * communicator can then be destroyed; the process carries on. After a failed
 * collective the contents of its output buffer are undefined; an out-of-place
 * collective never modifies its input buffer, so it can be issued again.
 */
#ifndef TRAINMOVER_TRAINMOVER_H
#define TRAINMOVER_TRAINMOVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TM_VERSION_MAJOR 0
#define TM_VERSION_MINOR 1
#define TM_VERSION_PATCH 0

/* In C++ the enums get int as their fixed underlying type, so that any int a
 * C caller passes is a valid value to check (and reject), not undefined
 * behaviour. The ABI is the same: C enums are ints. */
#ifdef __cplusplus
#define TM_ENUM_BASE : int
#else
#define TM_ENUM_BASE
#endif

typedef enum TM_ENUM_BASE {
  TM_SUCCESS = 0,
  TM_ERROR_INVALID_ARGUMENT = 1, /* a bad argument or configuration value */
  TM_ERROR_SYSTEM = 2,           /* a system call failed (errno in the detail) */
  TM_ERROR_TIMEOUT = 3,          /* a wait ran past its timeout */
  TM_ERROR_PEER_FAILED = 4,      /* a peer process died, hung or left */
  TM_ERROR_PROTOCOL = 5,         /* a peer sent a malformed or unexpected frame */
  TM_ERROR_AUTH = 6,             /* a peer failed authentication with the job secret */
  TM_ERROR_INTERNAL = 7,         /* a bug in TrainMover; please report it */
  TM_ERROR_UNSUPPORTED = 8,      /* the operation is not available in this build */
  TM_ERROR_NOT_FOUND = 9,        /* a rendezvous key does not exist */
  /* ---- job runtime: abort (tm_comm_abort) ---- */
  TM_ERROR_ABORTED = 10 /* the communicator was aborted, here or by a peer */
} tm_result_t;

typedef enum TM_ENUM_BASE {
  TM_FLOAT32 = 0,
  TM_FLOAT64 = 1,
  TM_FLOAT16 = 2,
  TM_BFLOAT16 = 3,
  TM_INT32 = 4,
  TM_INT64 = 5,
  TM_UINT8 = 6
} tm_datatype_t;

typedef enum TM_ENUM_BASE {
  TM_SUM = 0,
  TM_PROD = 1,
  TM_MAX = 2,
  TM_MIN = 3,
  TM_AVG = 4
} tm_redop_t;

typedef struct tm_comm* tm_comm_t;
typedef struct tm_store_server* tm_store_server_t;

/*
 * Communicator configuration. Declare it with TM_CONFIG_INITIALIZER, then
 * call tm_config_init(), which fills the defaults and applies the
 * TRAINMOVER_* environment variables (see trainmover(7)); set fields after
 * that to override both:
 *
 *   tm_config_t config = TM_CONFIG_INITIALIZER;
 *   tm_config_init(&config);
 *
 * Strings are copied by tm_comm_init(); they need not outlive the call.
 *
 * Compatibility: the first three fields tell the library which header the
 * program was built with. New fields are only ever added at the end, so a
 * program built against an older header passes a shorter struct: the
 * library reads (and tm_config_init() writes) only its struct_size bytes,
 * and the fields it lacks take what tm_config_init() would give them.
 * A struct_size larger than the library's tm_config_t, one that is not a
 * multiple of 8 or shorter than these three fields, a wrong magic or a
 * newer version is refused with TM_ERROR_INVALID_ARGUMENT.
 */
#define TM_CONFIG_MAGIC 0x746d6366u /* "tmcf" */
#define TM_CONFIG_VERSION 3u        /* this header's layout; raised with each new field */
typedef struct {
  size_t struct_size;           /* sizeof(tm_config_t) of the caller's header */
  unsigned int magic;           /* TM_CONFIG_MAGIC */
  unsigned int version;         /* TM_CONFIG_VERSION of the caller's header */
  int slot;                     /* this process's slot, 0 <= slot < nslots */
  int nslots;                   /* number of slots in the communicator */
  uint64_t job_id;              /* identifies the job on the wire */
  const char* job_secret;       /* hex, >= 32 digits: authenticates peers */
  const char* store_address;    /* rendezvous store: "tcp://host:port" (or "host:port"),
                                   "pmix" or "pmix,tcp://host:port"; see trainmover(3) */
  const char* listen_address;   /* address links bind to; NULL: see listen_interface */
  const char* listen_interface; /* interfaces to bind, as NCCL_SOCKET_IFNAME ("eth0", "=eth0",
                                   "^docker,lo"); NULL: the one that reaches the store */
  const char* name;             /* communicator name, distinguishes several in a job */
  double timeout_s;             /* a collective that makes no progress this long fails */
  double connect_timeout_s;     /* rendezvous and connection set-up */
  double heartbeat_interval_s;  /* liveness messages on idle links */
  size_t segment_bytes;         /* pipelining unit of the ring */
  size_t socket_buffer_bytes;   /* SO_SNDBUF/SO_RCVBUF; 0 leaves kernel autotuning on */
  int staging_buffers;          /* receive buffers of segment_bytes each, >= 2 */
  /* Recording of collectives for standby warm-up (see tm_iteration_begin). */
  int record_iterations; /* iterations recorded when trace_dir is set; 0: off (default 2) */
  const char* trace_dir; /* directory of the job's traces, one per role; NULL: no recording */
  int trace_compress;    /* 1: zstd-compress written traces (default 0) */
  const char* role;      /* this process's role, "stage=first,tp=0"; NULL: "stage=none" */
  /* Trace memory made resident by tm_comm_init(), so that the recorded
   * iterations take no page faults for the trace (default 32 MiB, at most a
   * quarter of physical memory). Set it to what the recorded iterations'
   * outputs take; tm_comm_init() pays the faults (on a virtual machine that
   * returns freed memory to its host, about 11 us per 4 KiB page). */
  size_t record_reserve_bytes;
  /* Version 2. The transport links use, by name: "auto" (shared memory
     between processes of one host, TCP to the others), "tcp" or "shm"
     (NULL: "auto"). */
  const char* transport;
  /* Version 3. The collectives' algorithm: "auto" (NULL), "ring" or
   * "doubling" (recursive doubling, allreduce only); and the sizes auto
   * switches at, "doubling:SIZE" (NULL: the built-in default). Every process
   * of a communicator must give the same values. See trainmover(7). */
  const char* algorithm;
  const char* algorithm_thresholds;
  /* New fields go here, each starting at a multiple of 8 bytes (so that an
   * older, shorter struct never ends inside one), with their default in
   * TM_CONFIG_INITIALIZER. */
} tm_config_t;

/* The header fields and the built-in defaults, in field order (the
 * TRAINMOVER_* variables are applied by tm_config_init()). */
#define TM_CONFIG_INITIALIZER                                                                 \
  {                                                                                           \
    sizeof(tm_config_t), TM_CONFIG_MAGIC, TM_CONFIG_VERSION, /* slot */ -1, /* nslots */ 0,   \
        /* job_id */ 0, /* job_secret */ NULL, /* store_address */ NULL,                      \
        /* listen_address */ NULL, /* listen_interface */ NULL, /* name */ "world",           \
        /* timeout_s */ 30.0, /* connect_timeout_s */ 60.0, /* heartbeat_interval_s */ 0.5,   \
        /* segment_bytes */ (size_t)512 << 10, /* socket_buffer_bytes */ (size_t)4 << 20,     \
        /* staging_buffers */ 4, /* record_iterations */ 2, /* trace_dir */ NULL,             \
        /* trace_compress */ 0, /* role */ NULL, /* record_reserve_bytes */ (size_t)32 << 20, \
        /* transport */ NULL, /* algorithm */ NULL, /* algorithm_thresholds */ NULL           \
  }

/* Fill `config` (declared with TM_CONFIG_INITIALIZER: only its struct_size
 * bytes are written) with defaults, then apply TRAINMOVER_* variables. Fails
 * with TM_ERROR_INVALID_ARGUMENT, naming the variable, when one cannot be
 * parsed, or naming the field when the header fields are wrong. String
 * fields taken from the environment point into it. */
tm_result_t tm_config_init(tm_config_t* config);

/* Join the communicator described by `config`: publish this slot's endpoint
 * in the store and connect to the ring neighbours. Collective over all slots:
 * it returns once this slot's links are up, or fails after connect_timeout_s
 * naming the slots that did not appear. On success *comm owns the resources
 * until tm_comm_destroy(). */
tm_result_t tm_comm_init(tm_comm_t* comm, const tm_config_t* config);

/* Release the communicator: close links, stop its progress thread and free
 * its memory. Valid in any state, including after an error; never blocks
 * longer than a short flush of pending messages. NULL is accepted. */
tm_result_t tm_comm_destroy(tm_comm_t comm);

tm_result_t tm_comm_slot(tm_comm_t comm, int* slot);
tm_result_t tm_comm_nslots(tm_comm_t comm, int* nslots);

/* After an operation failed with TM_ERROR_PEER_FAILED, TM_ERROR_TIMEOUT or
 * TM_ERROR_PROTOCOL: the slot at fault, or -1 when no slot is known. */
tm_result_t tm_comm_failed_slot(tm_comm_t comm, int* slot);

/* Collectives. `count` is in elements of `datatype`. Out-of-place when the
 * buffers differ, in-place when they are the same pointer (for allgather and
 * reduce_scatter: when sendbuf is this slot's part of recvbuf, as in NCCL).
 * All slots must issue the same operations in the same order with matching
 * counts; a mismatch is detected and reported as TM_ERROR_PROTOCOL. */
tm_result_t tm_allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t datatype,
                         tm_redop_t op, tm_comm_t comm);
/* sendbuf holds nslots*recvcount elements; slot s receives block s. */
tm_result_t tm_reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                              tm_datatype_t datatype, tm_redop_t op, tm_comm_t comm);
/* recvbuf receives nslots*sendcount elements, block s from slot s. */
tm_result_t tm_allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                         tm_datatype_t datatype, tm_comm_t comm);
/* Every slot's recvbuf receives root's sendbuf (sendbuf is read on root only). */
tm_result_t tm_broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t datatype,
                         int root, tm_comm_t comm);
/* Returns once every slot has entered the barrier. */
tm_result_t tm_barrier(tm_comm_t comm);

/* Point-to-point. Messages between two slots arrive in the order they were
 * sent; the receiver must post the same count and datatype. The first
 * exchange with a non-neighbour slot opens a link to it. */
tm_result_t tm_send(const void* buf, size_t count, tm_datatype_t datatype, int peer,
                    tm_comm_t comm);
tm_result_t tm_recv(void* buf, size_t count, tm_datatype_t datatype, int peer, tm_comm_t comm);

/* ---- Groups: communicators split from a parent (docs/groups.md) -----------
 * As MPI_Comm_split and ncclCommSplit. Collective over `comm` (the parent):
 * every slot calls it, and calls its splits of `comm` in the same order.
 * The slots that give the same color >= 0 form one group; its slots follow
 * (key, parent slot), so slot i of the group is the i-th smallest. A slot
 * giving TM_SPLIT_NOCOLOR gets *newcomm = NULL (and takes part). Results
 * depend only on slot numbers: the group is a communicator of its own (its
 * own links and progress thread; its name is the parent's with
 * "/split<n>.<color>"), whose collectives equal those of a communicator of
 * its members made with tm_comm_init() bit for bit.
 *
 * Switch: a group switches with its parent. tm_comm_join(),
 * tm_comm_prepare_switch(), tm_comm_wait_prepared() and
 * tm_comm_switchover() on the parent do the same on every group split from
 * it (recursively), in the parent's epoch: a group containing the replaced
 * slot takes the joiner in its place, the others only move to the new
 * epoch, so only the links that touch the replaced slot change. Never call
 * those four on a group itself while its parent lives. tm_comm_abort() of
 * the parent aborts its groups too. A standby splits its standby parent
 * with the (color, key) of the slot it will serve, in the same order as the
 * job did: it takes no part in a collective (it reads what the job's slots
 * gave from the store) and gets standby groups, which tm_comm_join() of the
 * parent joins.
 *
 * Ownership and order: *newcomm is a handle of its own, released with
 * tm_comm_destroy(). Destroy groups and parent in any order; a group
 * outliving its parent keeps working but switches no more. Threading: a
 * parent and its groups are used by one thread at a time (the same for all
 * of them), except tm_comm_abort().
 *
 * Errors: TM_ERROR_INVALID_ARGUMENT for NULL arguments, a parent that
 * replays a trace (sandbox), that this process left, or a color below
 * TM_SPLIT_NOCOLOR (every slot fails alike, naming the slot and its color);
 * the parent's own error when it has failed or was aborted (the split's
 * exchange runs on it); TM_ERROR_TIMEOUT when a slot does not take part. On
 * an error *newcomm is NULL. A split is never recorded into a trace. */
#define TM_SPLIT_NOCOLOR (-1)
tm_result_t tm_comm_split(tm_comm_t comm, int color, int key, tm_comm_t* newcomm);
/* The same, with the recording fields of `config` (trace_dir, role,
 * record_iterations, ...: see tm_config_t) for the group; its other fields
 * are the parent's. NULL: as tm_comm_split(). */
tm_result_t tm_comm_split_config(tm_comm_t comm, int color, int key, tm_comm_t* newcomm,
                                 const tm_config_t* config);
/* A sandbox (tm_comm_init_sandbox()) turned, in place, into the group
 * (color, key) of `parent` — for a standby that warmed up on a group's
 * trace: `parent` is then a standby and the group a standby of the job, as
 * tm_comm_go_standby() makes one. Between iterations; `color` must not be
 * TM_SPLIT_NOCOLOR. */
tm_result_t tm_comm_go_split(tm_comm_t comm, tm_comm_t parent, int color, int key);

/* ---- Membership switch: replacing the process that serves a slot ----------
 * (trainmover(3), MEMBERSHIP SWITCH). Phase 1 runs while collectives go on;
 * phase 2, tm_comm_switchover, is called by every process of the old and the
 * new view at the same point between operations. Views are numbered by
 * epoch (the first is 0) and published in the job's store. */

/* A standby: a process that serves no slot yet (config->slot is ignored).
 * Collectives fail on it until it has joined and switched over. */
tm_result_t tm_comm_init_standby(tm_comm_t* comm, const tm_config_t* config);

/* Phase 1 on a standby: take `slot` in view `epoch` (the view of epoch-1
 * with this process serving `slot`), publish that view for the others, and
 * start connecting to the new peers. Called once per standby. */
tm_result_t tm_comm_join(tm_comm_t comm, uint64_t epoch, int slot);

/* Phase 1 on a process of the current view: read view `epoch` (waiting up to
 * connect_timeout_s for it to be published) and prepare its links. Does not
 * block collectives. A process the view leaves out becomes the leaver. A
 * later epoch prepared afterwards replaces this one. */
tm_result_t tm_comm_prepare_switch(tm_comm_t comm, uint64_t epoch);

/* Until the links this process opens for the prepared view are up (at once
 * when it opens none). An error names the joining slot that failed; nothing
 * has switched, so the job may go on in the current view. */
tm_result_t tm_comm_wait_prepared(tm_comm_t comm);

/* Phase 2: after it the process is in view `epoch` — or, for the leaver, out
 * of the communicator (destroy it). After an unexpected failure, issue the
 * failed operations again after it. An error means a joining process is
 * missing: the communicator is in the new epoch, failed, naming the slot. */
tm_result_t tm_comm_switchover(tm_comm_t comm, uint64_t epoch);

/* The view this process is in. */
tm_result_t tm_comm_epoch(tm_comm_t comm, uint64_t* epoch);

/* ---- Abort (job runtime) ---------------------------------------------------
 * Ends a call blocked on a hung peer at once, as ncclCommAbort, so that a
 * coordinator need not wait out the timeout.
 *
 * Threading: the one call that may be made from another thread while a
 * thread is inside a call on `comm` (but not concurrently with or after
 * tm_comm_destroy(comm)). Thread-safe against itself and the progress
 * thread.
 *
 * Effect: the communicator fails with TM_ERROR_ABORTED (failed slot -1), as
 * it fails when a peer dies: the collective or send/recv in flight, a
 * tm_comm_wait_prepared() or a joiner's tm_comm_switchover() returns
 * TM_ERROR_ABORTED within milliseconds, and so does every later operation.
 * The abort is sent to the peers, whose operations fail with
 * TM_ERROR_ABORTED too ("reported by slot N"), so one abort frees every slot
 * of a hung job. Buffers are released at once: a returned call's buffers
 * are never touched again. What follows is either tm_comm_destroy(), or a
 * recovery switch exactly as after an unexpected failure
 * (tm_comm_prepare_switch() and tm_comm_switchover() to a later epoch),
 * which clears the failure; then issue the aborted operations again.
 *
 * Aborting an idle communicator fails its next operation; aborting twice, or
 * a communicator that had failed already (its error stays), does nothing
 * more. A call waiting on the rendezvous store (tm_comm_prepare_switch()
 * waiting for its view to be published, a first send to a non-neighbour
 * reading its endpoint) is not interrupted: it ends at its own timeout. On
 * a sandbox, every later call fails with TM_ERROR_ABORTED. NULL is
 * rejected. Returns TM_SUCCESS once the abort is in effect. */
tm_result_t tm_comm_abort(tm_comm_t comm);
/*
 * Record and replay (standby warm-up without talking to the job).
 *
 * Iterations of the training loop are marked with tm_iteration_begin() and
 * tm_iteration_end(). When config.trace_dir is set and record_iterations K is
 * not 0, tm_comm_init() records every collective and point-to-point call of
 * the first K iterations (op, datatype, count, root or peer, its index within
 * the iteration, and its output bytes). The K-th tm_iteration_end() ends
 * recording, so later calls cost nothing more, and saves the trace to
 * trace_dir under the process's role in the background (atomically; a role
 * that already has an identical trace keeps it, as data-parallel replicas
 * record the same); tm_comm_wait_trace() waits for the save and returns its
 * result. Calls outside iterations are not recorded.
 *
 * A standby opens a *sandbox* communicator on a trace with
 * tm_comm_init_sandbox(): the same calls, in the same iterations, return the
 * recorded outputs without any communication (send and barrier return at
 * once). A call that does not match the trace (op, reduction, datatype,
 * count, root or peer, or order) fails with TM_ERROR_PROTOCOL naming the
 * iteration, the call index, what the trace expected and what was asked; so
 * do calls past the end of the trace or outside an iteration, and every call
 * after one failed. tm_comm_go_live() then turns the same handle into a real
 * communicator, in place: the program keeps its handle and buffers.
 */
typedef enum TM_ENUM_BASE {
  TM_STAGE_NONE = 0, /* not pipeline-parallel */
  TM_STAGE_FIRST = 1,
  TM_STAGE_MIDDLE = 2,
  TM_STAGE_LAST = 3
} tm_stage_t;

typedef enum TM_ENUM_BASE {
  TM_MODE_LIVE = 0,      /* a real communicator, not recording */
  TM_MODE_RECORDING = 1, /* a real communicator recording its first iterations */
  TM_MODE_SANDBOX = 2    /* replaying a trace */
} tm_comm_mode_t;

/* Declares the process's role, which keys its trace: a pipeline stage and
 * optional attributes "key=value,key=value" (keys [a-z0-9_], values
 * [A-Za-z0-9_.-]; NULL or "" for none). Replaces config.role. Data-parallel
 * replicas whose outputs differ by slot (reduce_scatter, send/recv between
 * replicas) must add a distinguishing attribute such as "dp=3". Must be
 * called before the first tm_iteration_begin(). In a sandbox, fails unless
 * it is the role of the trace being replayed. */
tm_result_t tm_comm_set_role(tm_comm_t comm, tm_stage_t stage, const char* attributes);

/* Mark one iteration of the training loop. Not nested: begin, calls, end.
 * In a sandbox, tm_iteration_end() fails when calls of the iteration are
 * missing, and tm_iteration_begin() fails past the last recorded iteration. */
tm_result_t tm_iteration_begin(tm_comm_t comm);
tm_result_t tm_iteration_end(tm_comm_t comm);

/* Waits until the trace of a finished recording is saved and returns how
 * that went: an error naming the cause when it could not be written, or
 * TM_ERROR_INVALID_ARGUMENT when the role already had a different trace
 * (which is kept). Returns TM_SUCCESS at once when no save is pending
 * (recording off, not finished, or already waited for). tm_comm_destroy()
 * also waits for the save. */
tm_result_t tm_comm_wait_trace(tm_comm_t comm);

/* Opens a sandbox communicator replaying `trace_path`, or when it is NULL the
 * trace of config->role in config->trace_dir. The trace must come from job
 * config->job_id and, when config->role is set, be of that role; otherwise it
 * fails saying which, as it does for a truncated, corrupted or wrong-version
 * file. slot is config->slot; nslots is the recorded job's. No rendezvous
 * store, secret or network is needed. */
tm_result_t tm_comm_init_sandbox(tm_comm_t* comm, const tm_config_t* config,
                                 const char* trace_path);

/* Replaces a sandbox's replay with a real communicator built from `config`
 * (a rendezvous, like tm_comm_init(), collective with the job's other
 * slots), in place: `comm` and the program's buffers stay valid. Must be
 * called between iterations. On failure the handle stays a sandbox. */
tm_result_t tm_comm_go_live(tm_comm_t comm, const tm_config_t* config);

tm_result_t tm_comm_mode(tm_comm_t comm, tm_comm_mode_t* mode);

/* Turns a sandbox into a standby of the running job described by `config`
 * (as tm_comm_init_standby(), no rendezvous), in place: `comm` and the
 * program's buffers stay valid. Then tm_comm_join() and tm_comm_switchover()
 * put it in a slot of the running job with the two-phase switch. Must be
 * called between iterations. On failure the handle stays a sandbox. */
tm_result_t tm_comm_go_standby(tm_comm_t comm, const tm_config_t* config);

/* Embedded rendezvous store server for the job, bound to `address`
 * ("host:port"; port 0 picks a free one). Only clients presenting
 * `job_secret` (hex) are served. */
tm_result_t tm_store_server_start(tm_store_server_t* server, const char* address,
                                  const char* job_secret);
/* The address clients connect to, "host:port". Valid until the server stops. */
const char* tm_store_server_address(tm_store_server_t server);
tm_result_t tm_store_server_stop(tm_store_server_t server);

/* ---- Worker: a training process inside a TrainMover job -------------------
 * (trainmover(3), WORKER). The worker connects the process to the job's
 * coordinator (started by trainmover-launch; found through the TRAINMOVER_*
 * environment), heartbeats from a thread of its own, and carries out the
 * coordinator's recovery orders on the communicators the program registered:
 * abort, prepare, state transfer, rollback, switchover. The program
 *  - asks its kind: an active rank, a standby, or alone (no coordinator);
 *  - registers the buffers of its state (parameters, optimizer moments,
 *    step, RNG state, data position) and its communicators;
 *  - calls tm_worker_step_boundary() before every step (the safe points);
 *  - after a failed collective calls tm_worker_recover() and goes on from
 *    the step it returns, its registered buffers restored to that step;
 *  - as a standby, waits with tm_worker_wait_promotion(), builds its role
 *    (standby communicators, tm_comm_init_standby(), and its state buffers),
 *    registers them and calls tm_worker_join(), which fills the buffers from
 *    a live replica (or the leaver, or the checkpoint) and switches in.
 *
 * Step commit: at each boundary the registered buffers are copied into one
 * of two snapshots (the last two boundaries); a recovery restores every rank
 * to one agreed step, so a step's updates take effect on every slot or on
 * none, and at most the step in flight is redone. Cost: one copy of the
 * state per step and twice its memory.
 *
 * Threading: one thread calls a worker's functions. Ownership: the worker
 * never frees what it is given; buffers and communicators must outlive it.
 * Errors: TM_ERROR_PEER_FAILED when the coordinator is lost or ordered the
 * process to stop (the detail says which): the process must then exit. */
typedef struct tm_worker* tm_worker_t;

typedef enum TM_ENUM_BASE {
  TM_WORKER_ALONE = 0,  /* no coordinator (TRAINMOVER_CONTROL unset): calls cost nothing */
  TM_WORKER_ACTIVE = 1, /* serves the slot TRAINMOVER_SLOT names */
  TM_WORKER_STANDBY = 2 /* serves no slot until promoted (TRAINMOVER_STANDBY=1) */
} tm_worker_kind_t;

/* Loads a checkpoint into the registered buffers, in place (for a job with
 * no live replica of a stage, DP = 1). On entry *next_step is the highest
 * step the checkpoint may be of (UINT64_MAX: the latest): the stages of a
 * pipeline can be one checkpoint apart after a failure during a checkpoint
 * write, and the coordinator then asks every rank again for the newest one
 * they all hold. The function loads the newest checkpoint of a step at most
 * that (the initial state when there is none) and sets *next_step to the
 * step to run next. It must not use any communicator (they are failed
 * during a recovery). Returns TM_SUCCESS or an error, which stops the job. */
typedef tm_result_t (*tm_rollback_fn)(void* context, uint64_t* next_step);

/* Connects to the coordinator when the environment names one, and to the
 * job's store (TRAINMOVER_STORE; a standby under a PMIx store takes part in
 * the first wire-up's fence here). With TRAINMOVER_LIFELINE_FD it holds the
 * launcher's lifeline, on a thread of its own, so the launcher hears of the
 * process's death at the start of its exit. A standby
 * starts as "starting"; it reports its warm-up with the two calls below, or
 * else tm_worker_wait_promotion() reports it ready (cold) for every role.
 * On success *worker is owned by the caller until tm_worker_destroy(). */
tm_result_t tm_worker_init(tm_worker_t* worker);
/* Closes the coordinator connection (it sees it close; after
 * tm_worker_finish() that is no failure) and releases the lifeline (the
 * exit that follows is not heard as a death). NULL is accepted. */
tm_result_t tm_worker_destroy(tm_worker_t worker);
tm_result_t tm_worker_kind(tm_worker_t worker, tm_worker_kind_t* kind);

/* A buffer of the process's state, by address and size in bytes, in the
 * same order and sizes on every replica of a role. All before the first
 * boundary. */
tm_result_t tm_worker_register_buffer(tm_worker_t worker, const char* name, void* data,
                                      size_t bytes);
/* A communicator the program uses; job_slots[i] is the job slot serving its
 * slot i (nslots = its size). Every communicator is switched in every
 * recovery. It must stay valid until tm_worker_destroy(): when the
 * coordinator orders a recovery while the program is inside a step (between
 * a boundary and the next boundary, tm_worker_recover() or
 * tm_worker_finish()), the worker aborts it from its own thread, so a
 * collective waiting for a silent peer fails at once. */
tm_result_t tm_worker_add_comm(tm_worker_t worker, tm_comm_t comm, const int* job_slots,
                               int nslots);
tm_result_t tm_worker_set_rollback(tm_worker_t worker, tm_rollback_fn fn, void* context);

/* Step `next_step` is about to run: snapshot the state, report the step,
 * and carry out a recovery ordered meanwhile. *run_step is the step to run:
 * next_step, or another when a recovery restored the state to it. */
tm_result_t tm_worker_step_boundary(tm_worker_t worker, uint64_t next_step, uint64_t* run_step);
/* After a collective failed: ends every registered communicator's
 * operations (peers blocked on this process are released too), takes part
 * in the recovery, and returns in *resume_step the step the registered
 * buffers now hold, to run next. */
tm_result_t tm_worker_recover(tm_worker_t worker, uint64_t* resume_step);
/* Standby warm-up (before tm_worker_wait_promotion; trainmover(3),
 * WARM-UP). tm_worker_warmup_begin() reports "warming ROLE" while the
 * program replays that role's trace in a sandbox. tm_worker_warmup_done()
 * reports it ready: promotable to each role of warm[] (warmed up) and of
 * cold[] (served cold: allocated when promoted), with `detail` saying why
 * the cold ones are (NULL or "" for none). The coordinator promotes it to a
 * role of either list, never to another. At most once; a role may not be in
 * both lists. TM_ERROR_INVALID_ARGUMENT for an active rank or bad lists. */
tm_result_t tm_worker_warmup_begin(tm_worker_t worker, tm_stage_t role);
tm_result_t tm_worker_warmup_done(tm_worker_t worker, const tm_stage_t* warm, int nwarm,
                                  const tm_stage_t* cold, int ncold, const char* detail);
/* Standby: waits up to timeout_s to be promoted; *slot is the job slot.
 * Reports the standby ready (cold) for every role first unless
 * tm_worker_warmup_done() did. After the switch, the joiner measures its
 * first step (wall and CPU time, minor page faults of the process) and
 * reports it to the coordinator (the joiner_first_step event). */
tm_result_t tm_worker_wait_promotion(tm_worker_t worker, double timeout_s, int* slot);
/* Standby, once promoted and its communicators and buffers registered:
 * joins them to the job, receives the state, switches over; *resume_step is
 * the step its buffers now hold. Afterwards the process is an active rank. */
tm_result_t tm_worker_join(tm_worker_t worker, uint64_t* resume_step);
/* Training finished: tells the coordinator, so the exit that follows is no
 * failure however it ends (a kill included): nothing is recovered for it. */
tm_result_t tm_worker_finish(tm_worker_t worker);

/* Names and details of errors. */
const char* tm_get_error_string(tm_result_t result);
/* Detail of the last failed call on this thread ("" when none). The pointer
 * is valid until this thread's next TrainMover call. */
const char* tm_get_last_error(void);

size_t tm_datatype_size(tm_datatype_t datatype);
void tm_get_version(int* major, int* minor, int* patch);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINMOVER_TRAINMOVER_H */
