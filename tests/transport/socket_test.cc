// Tests of the address helpers in transport/tcp/socket.h.
#include <gtest/gtest.h>

#include <string>

#include "transport/tcp/socket.h"

namespace trainmover::transport::tcp {
namespace {

TEST(SplitHostPort, AcceptsNamesIpv4AndBracketedIpv6) {
  auto a = split_host_port("node7:29500");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->first, "node7");
  EXPECT_EQ(a->second, 29500);
  auto b = split_host_port("10.0.0.1:0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->first, "10.0.0.1");
  EXPECT_EQ(b->second, 0);
  auto c = split_host_port("[fe80::1%eth0]:65535");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->first, "fe80::1%eth0");
  EXPECT_EQ(c->second, 65535);
}

TEST(SplitHostPort, RejectsMalformedAddressesNamingThem) {
  for (const char* text : {"", "host", ":80", "host:", "host:65536", "host:-1", "host:http",
                           "::1:80", "[::1]", "[::1]80", "[::1:80", "[]:80"}) {
    auto r = split_host_port(text);
    ASSERT_FALSE(r.ok()) << "'" << text << "' was accepted";
    EXPECT_EQ(r.status().code(), TM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(r.status().message().find(std::string("'") + text + "'"), std::string::npos)
        << r.status().message();
  }
}

TEST(Resolve, NumericAddressesRoundTripThroughToString) {
  auto v4 = resolve("127.0.0.1:4242");
  ASSERT_TRUE(v4.ok()) << v4.status().message();
  EXPECT_EQ(v4->to_string(), "127.0.0.1:4242");
  EXPECT_EQ(v4->port(), 4242);
  EXPECT_TRUE(v4->is_loopback());
  EXPECT_EQ(v4->host(), "127.0.0.1");
  auto v6 = resolve("[::1]:7");
  ASSERT_TRUE(v6.ok()) << v6.status().message();
  EXPECT_EQ(v6->to_string(), "[::1]:7");
  EXPECT_TRUE(v6->is_loopback());
  auto remote = resolve("10.1.2.3:1");
  ASSERT_TRUE(remote.ok());
  EXPECT_FALSE(remote->is_loopback());
}

TEST(ListenOn, PortZeroPicksAFreePort) {
  auto address = resolve("127.0.0.1:0");
  ASSERT_TRUE(address.ok());
  auto fd = listen_on(address.value());
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  auto bound = local_address(fd->get());
  ASSERT_TRUE(bound.ok());
  EXPECT_NE(bound->port(), 0);
  // A second listener on the same port fails and says where.
  auto again = listen_on(bound.value());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find(bound->to_string()), std::string::npos)
      << again.status().message();
}

}  // namespace
}  // namespace trainmover::transport::tcp
