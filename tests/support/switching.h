// Helpers for multi-process tests of the membership switch: building views
// from the store, a training-like loop of allreduces checked against the
// serial reference, and an allocation watch for the zero-memory check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/view.h"
#include "rendezvous/tcp_store.h"
#include "support/multiprocess.h"
#include "transport/handshake.h"

namespace trainmover::testing {

std::unique_ptr<rendezvous::TcpStore> connect_store(const TestJob& job);

// The first view of communicator `name`: the endpoint every slot published.
Result<View> initial_view(rendezvous::Store& store, const std::string& name, int nslots);
// `view` at `epoch`, with `slot` served by `joiner`.
View replace_slot(View view, uint64_t epoch, int slot, const Endpoint& joiner);

// prepare_switch + wait_prepared + switchover on a process of the current view.
Status switch_to(Communicator& comm, const View& next);
// join + switchover on a standby.
Status join_view(Communicator& comm, const View& next);

// A handshake as `slot`/`epoch`/`instance` of communicator `name` with the
// process at `target` (which must serve `target_slot`): the acceptor's
// verdict (kAccepted when a link came up), or why no verdict came.
Result<transport::Verdict> try_handshake(const TestJob& job, const std::string& name, int slot,
                                         uint64_t epoch, uint64_t instance, int target_slot,
                                         const Endpoint& target);

// Publishes / reads a standby's endpoint under `key`.
Status publish_endpoint(rendezvous::Store& store, const std::string& key, const Endpoint& e);
Result<Endpoint> fetch_endpoint(rendezvous::Store& store, const std::string& key);

// One iteration of the test workload: an allreduce (sum of float32, where
// the order of additions shows in the bits) of `count` elements whose input
// depends on (slot, iteration) only. Returns an error, or a mismatch with
// the serial reference as TM_ERROR_INTERNAL naming the iteration; else the
// FNV-1a hash of the output, to compare with a run without a switch.
Result<uint64_t> run_iteration(Communicator& comm, int iteration, size_t count);

// Point-to-point across the ring after a switch: every slot sends to the
// slot two further on and receives from the one two back — lazily opened
// links, between processes of the new view. Fails when a value is wrong.
Status exchange_across(Communicator& comm);

// Bytes allocated with operator new while a watch is open, and the largest
// single allocation — process-wide (every thread). Test binaries that use
// it link support/alloc_counter.cc, which replaces operator new.
struct AllocationWatch {
  AllocationWatch();
  ~AllocationWatch();
  size_t largest() const;
  size_t total() const;
};

int64_t monotonic_ns();
int complain(int slot, const std::string& what);

}  // namespace trainmover::testing
