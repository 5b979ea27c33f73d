#include "transport/tcp/interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

namespace trainmover::transport::tcp {
namespace {

Status bad_filter(std::string_view spec, std::string_view why) {
  return error(TM_ERROR_INVALID_ARGUMENT, kSocketIfnameVariable, ": '", spec, "' ", why,
               " (a list of interface names or prefixes: eth0, =eth0, ^docker,lo)");
}

std::optional<InterfaceAddress> address_of(const ifaddrs& it) {
  if (it.ifa_addr == nullptr || (it.ifa_flags & IFF_UP) == 0) return std::nullopt;
  char text[INET6_ADDRSTRLEN];
  InterfaceAddress out{it.ifa_name, "", false, (it.ifa_flags & IFF_LOOPBACK) != 0};
  if (it.ifa_addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(it.ifa_addr)->sin_addr, text,
              sizeof text);
  } else if (it.ifa_addr->sa_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(it.ifa_addr)->sin6_addr;
    if (IN6_IS_ADDR_LINKLOCAL(&a)) return std::nullopt;  // unusable without a scope id
    inet_ntop(AF_INET6, &a, text, sizeof text);
    out.ipv6 = true;
  } else {
    return std::nullopt;
  }
  out.address = text;
  return out;
}

// IPv4 first, then IPv6; each in interface order.
const InterfaceAddress* first_of(const std::vector<const InterfaceAddress*>& candidates) {
  for (bool v6 : {false, true})
    for (const InterfaceAddress* a : candidates)
      if (a->ipv6 == v6) return a;
  return nullptr;
}

std::optional<std::string> routed_source(const std::optional<SocketAddress>& reach) {
  if (!reach) return std::nullopt;
  auto source = source_address_for(*reach);
  return source.ok() ? std::optional<std::string>(source.value()) : std::nullopt;
}

std::string names_of(const std::vector<InterfaceAddress>& all) {
  std::string names;
  for (const InterfaceAddress& a : all)
    if (names.find(a.ifname) == std::string::npos) names += (names.empty() ? "" : ", ") + a.ifname;
  return names.empty() ? "none" : names;
}

Result<std::string> select_by_filter(std::string_view spec,
                                     const std::vector<InterfaceAddress>& all,
                                     const std::optional<std::string>& routed) {
  TM_ASSIGN_OR_RETURN(IfnameFilter filter, IfnameFilter::parse(spec));
  std::vector<const InterfaceAddress*> matching;
  for (const InterfaceAddress& a : all) {
    if (!filter.matches(a.ifname)) continue;
    if (routed && a.address == *routed) return a.address;
    matching.push_back(&a);
  }
  if (const InterfaceAddress* a = first_of(matching)) return a->address;
  return error(TM_ERROR_INVALID_ARGUMENT, kSocketIfnameVariable, ": '", spec,
               "' matches no interface that is up with an IP address (there are: ", names_of(all),
               ")");
}

std::string default_address(const std::vector<InterfaceAddress>& all) {
  static const IfnameFilter kVirtual{false, false, {"lo", "docker", "virbr"}};
  std::vector<const InterfaceAddress*> real, loopback;
  for (const InterfaceAddress& a : all)
    (a.loopback || kVirtual.matches(a.ifname) ? loopback : real).push_back(&a);
  if (const InterfaceAddress* a = first_of(real)) return a->address;
  if (const InterfaceAddress* a = first_of(loopback)) return a->address;
  return "127.0.0.1";
}

}  // namespace

Result<IfnameFilter> IfnameFilter::parse(std::string_view spec) {
  IfnameFilter f;
  std::string_view rest = spec;
  if (!rest.empty() && rest.front() == '^') f.exclude = true, rest.remove_prefix(1);
  if (!rest.empty() && rest.front() == '=') f.exact = true, rest.remove_prefix(1);
  while (true) {
    size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    if (name.empty()) return bad_filter(spec, "has an empty interface name");
    if (name.size() >= IF_NAMESIZE)
      return bad_filter(spec, "has a name longer than an interface's");
    f.names.emplace_back(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return f;
}

bool IfnameFilter::matches(std::string_view ifname) const {
  bool listed = false;
  for (const std::string& n : names)
    listed = listed || (exact ? ifname == n : ifname.substr(0, n.size()) == n);
  return listed != exclude;
}

Result<std::vector<InterfaceAddress>> interface_addresses() {
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0) return system_error("getifaddrs", errno);
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, freeifaddrs);
  std::vector<InterfaceAddress> out;
  for (const ifaddrs* it = list.get(); it != nullptr; it = it->ifa_next)
    if (auto a = address_of(*it)) out.push_back(std::move(*a));
  return out;
}

Result<std::string> select_listen_address(std::string_view filter_spec,
                                          const std::optional<SocketAddress>& reach) {
  std::optional<std::string> routed = routed_source(reach);
  if (filter_spec.empty() && routed) return *routed;
  TM_ASSIGN_OR_RETURN(std::vector<InterfaceAddress> all, interface_addresses());
  if (!filter_spec.empty()) return select_by_filter(filter_spec, all, routed);
  return default_address(all);
}

Result<std::string> listen_address_from_environment(const std::optional<SocketAddress>& reach) {
  const char* spec = std::getenv(kSocketIfnameVariable);
  return select_listen_address(spec != nullptr ? spec : "", reach);
}

}  // namespace trainmover::transport::tcp
