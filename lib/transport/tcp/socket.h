// TCP socket helpers: addresses, listening, non-blocking connect, options.
// All sockets are close-on-exec and non-blocking.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::transport::tcp {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  uint16_t port() const;
  bool is_loopback() const;
  // "1.2.3.4:5" or "[::1]:5".
  std::string to_string() const;
  // The address without the port.
  std::string host() const;
};

// Splits "host:port" or "[v6addr]:port".
Result<std::pair<std::string, uint16_t>> split_host_port(std::string_view text);
// Resolves "host:port" (numeric or a name) to its first address.
Result<SocketAddress> resolve(std::string_view host_port);
Result<SocketAddress> resolve(const std::string& host, uint16_t port);

// A listening socket bound to `address` (port 0 picks a free port).
Result<UniqueFd> listen_on(const SocketAddress& address, int backlog = 256);
Result<SocketAddress> local_address(int fd);
Result<SocketAddress> peer_address(int fd);

// Starts a non-blocking connect; completion is signalled by writability,
// then checked with finish_connect().
Result<UniqueFd> start_connect(const SocketAddress& address);
Status finish_connect(int fd);

struct LinkSocketOptions {
  size_t buffer_bytes = 0;  // 0: leave the kernel's autotuning on
};
// TCP_NODELAY, buffers, keep-alive with short probes (a dead host is noticed
// even when nothing is being sent).
Status set_link_options(int fd, const LinkSocketOptions& options);

// The local address the kernel would use to reach `destination`: the one
// address a process must listen on to be reachable by its peers.
Result<std::string> source_address_for(const SocketAddress& destination);

}  // namespace trainmover::transport::tcp
