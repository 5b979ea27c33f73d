// Finding and reaching a process of the same host, for shared-memory links.
//
// Two processes can share memory and reach each other's abstract Unix
// sockets when they run under the same kernel boot and in the same network
// namespace: host_identity() names that pair. A process that offers
// shared-memory links listens on an abstract Unix socket (no file is left
// behind, and it is reachable from that namespace only); peers then run the
// usual handshake with the job's secret over it, so the name grants nothing.
//
// All sockets are non-blocking and close-on-exec.
#pragma once

#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::transport::shm {

// 16 hex digits: a hash of the boot id and the network namespace.
Result<std::string> host_identity();

// Listens on the abstract socket "@name".
Result<UniqueFd> listen_local(const std::string& name, int backlog = 256);
// Starts connecting to "@name"; completion is signalled by writability.
Result<UniqueFd> start_connect_local(const std::string& name);

}  // namespace trainmover::transport::shm
