// The one place that turns a transport's name into a Transport, as gloo
// hands a device to its context: the communicator names a kind ("auto",
// "tcp", "shm"; ibverbs/ and nccl/ are added here as siblings of tcp/ and
// shm/) and never a class.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/event_loop.h"
#include "common/secret.h"
#include "common/status.h"
#include "transport/transport.h"

namespace trainmover::transport {

namespace shm {
class RingPool;
}

// What every transport is told (TcpTransport takes it as it is). Fields a
// kind has no use for are ignored (a shared-memory transport has no socket
// buffers).
struct TransportOptions {
  uint64_t job_id = 0;
  uint64_t comm_id = 0;
  uint64_t epoch = 0;
  int32_t slot = -1;
  uint64_t instance_id = 0;
  std::string listen_host = "127.0.0.1";  // the one address a network transport binds
  size_t socket_buffer_bytes = 0;         // 0: the kernel's autotuning
  uint64_t max_frame_bytes = uint64_t{1} << 31;
  size_t max_outstanding = 512;
  // Per direction of a shared-memory link. 1 MiB, not 4: a new link
  // allocates and zeroes its ring (MAP_POPULATE) on the recovery's critical
  // path (the N=4 recovery took 18-20 ms with 4 MiB, 9-13 ms with 1 MiB), and
  // a ring that stays in cache copies faster (docs/shm-transport.md).
  size_t shm_ring_bytes = size_t{1} << 20;
  // Rings made ahead of the links (shm/ring_pool.h); null: each link makes
  // its own. Shared with whoever filled it.
  std::shared_ptr<shm::RingPool> ring_pool;
  Duration handshake_timeout = std::chrono::seconds(10);
  Duration accept_timeout = std::chrono::seconds(10);
};

// The kind used when none is configured.
// Shared memory between processes of one host, TCP to the others.
inline constexpr std::string_view kDefaultTransport = "auto";

// The kinds this build has, for messages and --help.
std::vector<std::string> transport_kinds();

// OK when `kind` names a transport of this build; otherwise an
// invalid-argument error naming `what` (the field or variable) and the kinds
// there are.
Status check_transport_kind(std::string_view kind, std::string_view what);

// The one address a network transport of this process binds: `address`
// when given; else chosen by `ifname_filter` (TRAINMOVER_SOCKET_IFNAME
// syntax) among the interfaces, preferring the one that routes to
// `reach` ("host:port" of the store or coordinator; empty: none known); see
// tcp/interfaces.h. A bad filter or an unresolvable `reach` is an error.
Result<std::string> choose_listen_host(std::string_view address, std::string_view ifname_filter,
                                       std::string_view reach);

// A transport of `kind`. `secret`, `loop` and both observers must outlive it.
Result<std::unique_ptr<Transport>> create_transport(std::string_view kind, EventLoop& loop,
                                                    const JobSecret& secret,
                                                    const TransportOptions& options,
                                                    TransportListener* listener,
                                                    LinkObserver* link_observer);

}  // namespace trainmover::transport
