// Communicator configuration: the C API's tm_config_t, its defaults, the
// TRAINMOVER_* environment variables, and the checked C++ form.
//
// One table (config.cc) lists every variable with its meaning; it drives
// both parsing and the documentation printed by environment_help().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/algorithm.h"
#include "comm/link_counters.h"
#include "common/status.h"
#include "trainmover/trainmover.h"
#include "transport/shm/ring_pool.h"

namespace trainmover {

// Defaults, then the environment, into a struct of this header's size.
// Strings point into the environment or to static literals.
Status init_config(tm_config_t& config);

// A caller's tm_config_t, possibly from an older header (trainmover.h says
// how it may differ), and the only code that reads or writes one: each
// checks the header fields (magic, version, struct_size), naming the one
// that is wrong, and touches only the caller's struct_size bytes.
//   init_caller_config: tm_config_init(), written into those bytes.
//   complete_config:    the caller's struct at this header's size; the
//                       fields an older header lacks take init_config's.
Status init_caller_config(tm_config_t& caller);
Result<tm_config_t> complete_config(const tm_config_t& caller);

// The algorithm policy a complete config (or init_config's) gives; errors
// name the field and its variable.
Result<AlgorithmPolicy> algorithm_policy(const tm_config_t& config);

// Text listing every TRAINMOVER_* variable, for --help output.
std::string environment_help();
// The names of every variable read (the man page is checked against it).
std::vector<std::string> environment_variables();

// tm_config_t.record_reserve_bytes by default: the recorded iterations of a
// small job (two iterations of 16 MiB of outputs).
inline constexpr size_t kDefaultRecordReserveBytes =
    tm_config_t TM_CONFIG_INITIALIZER.record_reserve_bytes;

struct CommConfig {
  int slot = -1;
  int nslots = 0;
  uint64_t job_id = 0;
  std::string job_secret;  // hex
  std::string store_address;
  std::string listen_address;
  std::string listen_interface;
  std::string name = "world";
  std::string transport = "auto";  // a kind of transport/transport_factory.h
  double timeout_s = 30.0;
  double connect_timeout_s = 60.0;
  double heartbeat_interval_s = 0.5;
  size_t segment_bytes = size_t{512} << 10;
  size_t socket_buffer_bytes = size_t{4} << 20;  // capped by net.core.[rw]mem_max
  int staging_buffers = 4;
  AlgorithmPolicy algorithms;  // which algorithm each collective runs (comm/algorithm.h)
  // Where the communicator counts the links it opens and closes; null: a
  // counter of its own. Shared so that the counts outlive the communicator
  // (a rebuild destroys it) and several communicators can add to one.
  std::shared_ptr<LinkCounters> link_counters;
  // Shared-memory rings made ahead of this communicator's links
  // (transport/shm/ring_pool.h), shared with its groups; null: an active
  // communicator makes a pool with a spare ring of its own at start (for
  // the link to a future joiner), a standby has none (tm_comm_init_sandbox
  // fills one for a standby that warms up).
  std::shared_ptr<transport::shm::RingPool> ring_pool;

  // `config` as complete_config() takes it.
  static Result<CommConfig> from_c(const tm_config_t& config);
  // Each problem is named with the field and its environment variable.
  Status validate() const;
};

// Point-to-point messages go in frames of this size, and a link accepts
// frames up to max(segment_bytes, this): it bounds what a cancelled frame's
// rescue copy (StreamLink::cancel_pending) can cost.
inline constexpr size_t kMaxP2PFrameBytes = size_t{4} << 20;

// The ring's pipelining unit for the collectives that only copy (allgather
// and broadcast: no reduction, so no staging buffer of segment_bytes): when
// every link is TCP (transport "tcp"), 4 x segment_bytes (2 MiB by
// default) within a link's frame limit, since larger messages cost fewer
// system calls and wake-ups there (the allgather's ratio to OpenMPI-tcp
// rose by 0.04-0.10 at 4-16 MiB); over shared memory they were slower
// (docs/collectives.md), so segment_bytes otherwise. Every slot cuts a
// call into the same messages: it depends only on the transport and
// segment settings, which every process of a job shares.
size_t copy_segment_bytes(const CommConfig& config);
// The ring broadcast's segment for a call of `bytes`: a chain of N-1 hops
// overlaps only while a call has segments enough, so bytes / 8 within
// [segment_bytes, copy_segment_bytes]: 2 MiB from 16 MiB by default over
// TCP (4 MiB in 2 MiB segments was slower than in 512 KiB ones), always
// segment_bytes over shared memory. The call's size is the same on every
// slot, so is the segment.
size_t broadcast_segment_bytes(const CommConfig& config, size_t bytes);

}  // namespace trainmover
