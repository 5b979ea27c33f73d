// A job whose store and links are on the interface besides loopback (eth0,
// 192.0.2.2 on the project's machines): chosen by TRAINMOVER_SOCKET_IFNAME
// (listen_interface), or by the route to the store when it is unset. Every
// rank checks with getsockname that each of its TCP sockets (the store
// client, the listener, the links) is on that address and none on
// 127.0.0.1. Skips where the machine has only loopback.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "support/multiprocess.h"
#include "support/socket_hosts.h"
#include "transport/tcp/interfaces.h"

namespace trainmover {
namespace {

std::optional<transport::tcp::InterfaceAddress> other_interface() {
  auto all = transport::tcp::interface_addresses();
  if (!all.ok()) return std::nullopt;
  for (const auto& a : *all)
    if (!a.loopback && !a.ipv6) return a;
  return std::nullopt;
}

// One rank: an allreduce, then the local address of every TCP socket.
int rank_on(const testing::TestJob& job, int slot, int nslots, const std::string& filter,
            const std::string& address) {
  CommConfig c = job.config(slot, nslots);
  c.listen_interface = filter;
  auto comm = Communicator::create(c);
  if (!comm.ok())
    return std::fprintf(stderr, "slot %d: %s\n", slot, comm.status().message().c_str()), 2;
  std::vector<float> in(4096, 1.0f), out(in.size());
  Status st = (*comm)->allreduce(in.data(), out.data(), in.size(), TM_FLOAT32, TM_SUM);
  if (!st.ok()) return std::fprintf(stderr, "slot %d: %s\n", slot, st.message().c_str()), 3;
  if (out[0] != static_cast<float>(nslots)) return 4;
  std::set<std::string> hosts = testing::tcp_socket_hosts();
  if (hosts != std::set<std::string>{address}) {
    std::fprintf(stderr, "slot %d: TCP sockets on %s, expected only %s\n", slot,
                 testing::tcp_socket_hosts_text().c_str(), address.c_str());
    return 5;
  }
  return 0;
}

void expect_all_ok(const std::vector<testing::ChildExit>& exits) {
  for (size_t s = 0; s < exits.size(); ++s)
    EXPECT_TRUE(exits[s].ok()) << "slot " << s << ": " << exits[s].describe();
}

TEST(Interfaces, NamedInterfaceCarriesStoreAndLinks) {
  auto other = other_interface();
  if (!other) GTEST_SKIP() << "no interface besides loopback with an IPv4 address";
  testing::TestJob job(0, other->address);
  ASSERT_EQ(job.store_address().rfind(other->address + ":", 0), 0u) << job.store_address();
  expect_all_ok(job.run(
      3, [&](int slot) { return rank_on(job, slot, 3, "=" + other->ifname, other->address); }));
}

TEST(Interfaces, UnsetFollowsTheRouteToTheStore) {
  auto other = other_interface();
  if (!other) GTEST_SKIP() << "no interface besides loopback with an IPv4 address";
  testing::TestJob job(0, other->address);
  expect_all_ok(job.run(3, [&](int slot) { return rank_on(job, slot, 3, "", other->address); }));
}

TEST(Interfaces, BadInterfaceIsNamed) {
  testing::TestJob job;
  CommConfig c = job.config(0, 1);
  c.listen_interface = "=no-such-if9";
  auto comm = Communicator::create(c);
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(comm.status().message().find("TRAINMOVER_SOCKET_IFNAME"), std::string::npos)
      << comm.status().message();
}

}  // namespace
}  // namespace trainmover
