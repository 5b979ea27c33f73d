// The one place that turns the configured store (TRAINMOVER_STORE,
// tm_config_t.store_address) into a Store, as gloo hands a device to its
// context: callers name a kind, never a class.
//
//   tcp://HOST:PORT   the TCP store server the job embeds (the launcher's,
//   HOST:PORT         or the srun-side coordinator's); the bare form is what
//                     trainmover-launch sets.
//   pmix              PMIx put/commit/fence/get for the first wire-up only
//                     (pmix/pmix_store.h says what it cannot do); needs a
//                     build with PMIx and a process started by a PMIx server.
//   pmix,tcp://HOST:PORT
//                     the same, then the TCP store for everything after the
//                     first wire-up (later joiners, standbys, switches).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/secret.h"
#include "common/status.h"
#include "rendezvous/store.h"

namespace trainmover::rendezvous {

// The variable whose value a StoreSpec is parsed from, named in its errors.
inline constexpr const char* kStoreVariable = "TRAINMOVER_STORE";

struct StoreSpec {
  enum class Kind { kTcp, kPmix };
  Kind kind = Kind::kTcp;
  // kTcp: the server's "host:port". kPmix: the server for what follows the
  // first wire-up; empty when there is none.
  std::string tcp_address;

  // Fails with TM_ERROR_INVALID_ARGUMENT naming TRAINMOVER_STORE and the
  // forms it takes (also for pmix in a build without PMIx).
  static Result<StoreSpec> parse(std::string_view text);
};

// A client of the configured store, connected (TCP: retrying refused
// connections until `connect_timeout`).
Result<std::unique_ptr<Store>> open_store(const StoreSpec& spec, const JobSecret& secret,
                                          uint64_t job_id, Duration connect_timeout);

// A client of the part of `spec` that answers at any time, for what follows
// the first wire-up (state transfer to a joiner, standbys, switches): its
// TCP store. Plain pmix has none: an error saying to add ,tcp://HOST:PORT.
// Never opens PMIx (one client per process: the communicator's).
Result<std::unique_ptr<Store>> open_any_time_store(const StoreSpec& spec, const JobSecret& secret,
                                                   uint64_t job_id, Duration connect_timeout);

// Starts the job's store server on `address`: "HOST:PORT" or
// "tcp://HOST:PORT"; port 0 picks a free port. An empty HOST (":0") binds
// the one address that reaches the other nodes (TRAINMOVER_SOCKET_IFNAME,
// else the first interface that is not a loopback one: see
// transport/tcp/interfaces.h).
Result<std::unique_ptr<StoreServer>> start_store_server(std::string_view address,
                                                        const JobSecret& secret, uint64_t job_id);

}  // namespace trainmover::rendezvous
