// Tests of the listen-address choice (transport/tcp/interfaces.h): the
// NCCL_SOCKET_IFNAME-style filter, and the address chosen from this
// machine's real interfaces. Tests that need an interface besides loopback
// skip when the machine has none.
#include "transport/tcp/interfaces.h"

#include <gtest/gtest.h>

#include "transport/tcp/socket.h"

namespace trainmover::transport::tcp {
namespace {

TEST(IfnameFilter, PrefixExactAndExclude) {
  auto prefix = IfnameFilter::parse("eth,ib");
  ASSERT_TRUE(prefix.ok()) << prefix.status().message();
  EXPECT_TRUE(prefix->matches("eth0"));
  EXPECT_TRUE(prefix->matches("ib1"));
  EXPECT_FALSE(prefix->matches("lo"));
  EXPECT_FALSE(prefix->matches("et"));

  auto exact = IfnameFilter::parse("=eth0");
  ASSERT_TRUE(exact.ok());
  EXPECT_TRUE(exact->matches("eth0"));
  EXPECT_FALSE(exact->matches("eth01"));

  auto exclude = IfnameFilter::parse("^docker,lo");
  ASSERT_TRUE(exclude.ok());
  EXPECT_TRUE(exclude->matches("eth0"));
  EXPECT_FALSE(exclude->matches("docker0"));
  EXPECT_FALSE(exclude->matches("lo"));

  auto exclude_exact = IfnameFilter::parse("^=lo");
  ASSERT_TRUE(exclude_exact.ok());
  EXPECT_TRUE(exclude_exact->matches("lo0"));
  EXPECT_FALSE(exclude_exact->matches("lo"));
}

TEST(IfnameFilter, BadSpecsNameTheVariable) {
  for (const char* bad :
       {"", "^", "=", "^=", "eth0,", ",eth0", "eth0,,ib0", "averyveryverylongname"}) {
    auto f = IfnameFilter::parse(bad);
    ASSERT_FALSE(f.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(f.status().code(), TM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(f.status().message().find(kSocketIfnameVariable), std::string::npos)
        << f.status().message();
  }
}

// The first non-loopback interface with an IPv4 address, if any.
std::optional<InterfaceAddress> other_interface() {
  auto all = interface_addresses();
  if (!all.ok()) return std::nullopt;
  for (const InterfaceAddress& a : *all)
    if (!a.loopback && !a.ipv6) return a;
  return std::nullopt;
}

TEST(SelectListenAddress, LoopbackByNameAndByRoute) {
  auto by_name = select_listen_address("=lo", std::nullopt);
  ASSERT_TRUE(by_name.ok()) << by_name.status().message();
  EXPECT_EQ(*by_name, "127.0.0.1");
  auto store = resolve("127.0.0.1:29500");
  ASSERT_TRUE(store.ok());
  auto by_route = select_listen_address("", *store);
  ASSERT_TRUE(by_route.ok()) << by_route.status().message();
  EXPECT_EQ(*by_route, "127.0.0.1");
}

TEST(SelectListenAddress, NamedInterfaceWinsOverTheRoute) {
  auto other = other_interface();
  if (!other) GTEST_SKIP() << "no interface besides loopback with an IPv4 address";
  auto store = resolve("127.0.0.1:29500");
  ASSERT_TRUE(store.ok());
  // The store is on loopback, but the filter names the other interface.
  auto chosen = select_listen_address("=" + other->ifname, *store);
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ(*chosen, other->address);
  auto excluded = select_listen_address("^lo", *store);
  ASSERT_TRUE(excluded.ok()) << excluded.status().message();
  EXPECT_NE(*excluded, "127.0.0.1");
  // Without a filter or a peer: not loopback.
  auto unset = select_listen_address("", std::nullopt);
  ASSERT_TRUE(unset.ok());
  EXPECT_NE(*unset, "127.0.0.1");
  // The route to the interface's own address goes through it.
  auto self = resolve(other->address, 1);
  ASSERT_TRUE(self.ok());
  auto routed = select_listen_address("", *self);
  ASSERT_TRUE(routed.ok());
  EXPECT_EQ(*routed, other->address);
}

TEST(SelectListenAddress, NoMatchNamesTheVariableAndTheInterfaces) {
  auto chosen = select_listen_address("=no-such-if9", std::nullopt);
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().code(), TM_ERROR_INVALID_ARGUMENT);
  const std::string& m = chosen.status().message();
  EXPECT_NE(m.find(kSocketIfnameVariable), std::string::npos) << m;
  EXPECT_NE(m.find("no-such-if9"), std::string::npos) << m;
  EXPECT_NE(m.find("lo"), std::string::npos) << m;  // the interfaces there are
}

}  // namespace
}  // namespace trainmover::transport::tcp
