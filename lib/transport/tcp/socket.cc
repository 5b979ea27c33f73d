#include "transport/tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cerrno>
#include <cstring>

#include "common/parse.h"

namespace trainmover::transport::tcp {

uint16_t SocketAddress::port() const {
  if (storage.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (storage.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

bool SocketAddress::is_loopback() const {
  if (storage.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr) >> 24) == 127;
  }
  if (storage.ss_family == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr);
  }
  return false;
}

std::string SocketAddress::host() const {
  char text[INET6_ADDRSTRLEN] = "?";
  if (storage.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text,
              sizeof text);
  } else if (storage.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text,
              sizeof text);
  }
  return text;
}

std::string SocketAddress::to_string() const {
  if (storage.ss_family == AF_INET6) return "[" + host() + "]:" + std::to_string(port());
  return host() + ":" + std::to_string(port());
}

Result<std::pair<std::string, uint16_t>> split_host_port(std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is not of the form [address]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is not of the form host:port");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' has no host");
  auto port_number = parse_int(port, 0, 65535);
  if (!port_number.ok()) return port_number.status().with_context(str_cat("port of '", text, "'"));
  return std::make_pair(std::string(host), static_cast<uint16_t>(port_number.value()));
}

Result<SocketAddress> resolve(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0)
    return error(TM_ERROR_INVALID_ARGUMENT, "cannot resolve '", host, "': ", gai_strerror(rc));
  SocketAddress address;
  std::memcpy(&address.storage, found->ai_addr, found->ai_addrlen);
  address.length = found->ai_addrlen;
  freeaddrinfo(found);
  return address;
}

Result<SocketAddress> resolve(std::string_view host_port) {
  TM_ASSIGN_OR_RETURN(auto parts, split_host_port(host_port));
  return resolve(parts.first, parts.second);
}

Result<UniqueFd> listen_on(const SocketAddress& address, int backlog) {
  UniqueFd fd(socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return system_error("socket", errno);
  if (bind(fd.get(), address.get(), address.length) != 0) {
    return system_error("bind to " + address.to_string(), errno);
  }
  if (listen(fd.get(), backlog) != 0)
    return system_error("listen on " + address.to_string(), errno);
  return fd;
}

Result<SocketAddress> local_address(int fd) {
  SocketAddress address;
  address.length = sizeof address.storage;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) {
    return system_error("getsockname", errno);
  }
  return address;
}

Result<SocketAddress> peer_address(int fd) {
  SocketAddress address;
  address.length = sizeof address.storage;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) {
    return system_error("getpeername", errno);
  }
  return address;
}

Result<UniqueFd> start_connect(const SocketAddress& address) {
  UniqueFd fd(socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return system_error("socket", errno);
  if (connect(fd.get(), address.get(), address.length) != 0 && errno != EINPROGRESS) {
    return system_error("connect to " + address.to_string(), errno);
  }
  return fd;
}

Status finish_connect(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
    return system_error("getsockopt(SO_ERROR)", errno);
  if (err != 0) return system_error("connect", err);
  return Status::Ok();
}

Status set_link_options(int fd, const LinkSocketOptions& options) {
  auto set = [fd](int level, int name, int value, const char* what) -> Status {
    if (setsockopt(fd, level, name, &value, sizeof value) != 0) return system_error(what, errno);
    return Status::Ok();
  };
  TM_RETURN_IF_ERROR(set(IPPROTO_TCP, TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)"));
  if (options.buffer_bytes > 0) {
    int bytes = static_cast<int>(options.buffer_bytes);
    TM_RETURN_IF_ERROR(set(SOL_SOCKET, SO_SNDBUF, bytes, "setsockopt(SO_SNDBUF)"));
    TM_RETURN_IF_ERROR(set(SOL_SOCKET, SO_RCVBUF, bytes, "setsockopt(SO_RCVBUF)"));
  }
  TM_RETURN_IF_ERROR(set(SOL_SOCKET, SO_KEEPALIVE, 1, "setsockopt(SO_KEEPALIVE)"));
  TM_RETURN_IF_ERROR(set(IPPROTO_TCP, TCP_KEEPIDLE, 5, "setsockopt(TCP_KEEPIDLE)"));
  TM_RETURN_IF_ERROR(set(IPPROTO_TCP, TCP_KEEPINTVL, 2, "setsockopt(TCP_KEEPINTVL)"));
  TM_RETURN_IF_ERROR(set(IPPROTO_TCP, TCP_KEEPCNT, 3, "setsockopt(TCP_KEEPCNT)"));
  return Status::Ok();
}

Result<std::string> source_address_for(const SocketAddress& destination) {
  // A connected UDP socket sends nothing; it only asks the kernel for a route.
  UniqueFd fd(socket(destination.storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return system_error("socket", errno);
  if (connect(fd.get(), destination.get(), destination.length) != 0) {
    return system_error("route to " + destination.to_string(), errno);
  }
  TM_ASSIGN_OR_RETURN(SocketAddress local, local_address(fd.get()));
  return local.host();
}

}  // namespace trainmover::transport::tcp
