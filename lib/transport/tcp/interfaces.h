// Which local address a process listens on so that the other nodes reach
// it: chosen by TRAINMOVER_SOCKET_IFNAME (the syntax of NCCL_SOCKET_IFNAME),
// else the address the kernel routes to a known peer (the store or the
// coordinator), else the first interface that is not a loopback, docker or
// virtual bridge one. One address is chosen and bound, never the wildcard.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "transport/tcp/socket.h"

namespace trainmover::transport::tcp {

// The environment variable the filter comes from, named in its errors.
inline constexpr const char* kSocketIfnameVariable = "TRAINMOVER_SOCKET_IFNAME";

// A NCCL_SOCKET_IFNAME filter: a comma-separated list of interface-name
// prefixes ("eth,ib"); "=" first makes them exact names ("=eth0"); "^" first
// excludes them instead ("^docker,lo", "^=lo"). An empty list, an empty
// name or a name longer than an interface name can be is an error.
struct IfnameFilter {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;

  static Result<IfnameFilter> parse(std::string_view spec);
  bool matches(std::string_view ifname) const;
};

// One IP address of an interface that is up (IPv6 link-local addresses,
// which need a scope to be used, are left out).
struct InterfaceAddress {
  std::string ifname;
  std::string address;  // numeric, no port
  bool ipv6 = false;
  bool loopback = false;
};
Result<std::vector<InterfaceAddress>> interface_addresses();

// The address to listen on. `filter_spec` (the value of
// TRAINMOVER_SOCKET_IFNAME; empty: unset) picks among the interfaces: the
// one `reach` routes through when it matches, else the first match, IPv4
// before IPv6. Unset, the address that routes to `reach` is taken; without
// `reach`, the first address of an interface not named lo, docker* or
// virbr* (IPv4 first), else loopback. No matching interface is an error
// naming the variable and listing the interfaces there are.
Result<std::string> select_listen_address(std::string_view filter_spec,
                                          const std::optional<SocketAddress>& reach);

// The same, with the filter read from TRAINMOVER_SOCKET_IFNAME.
Result<std::string> listen_address_from_environment(const std::optional<SocketAddress>& reach);

}  // namespace trainmover::transport::tcp
