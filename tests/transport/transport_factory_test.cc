// Tests of the transport factory: kinds by name, a clear error for an
// unknown one, and a real TCP transport bound to the chosen address.
#include "transport/transport_factory.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "transport/tcp/interfaces.h"

namespace trainmover::transport {
namespace {

class NoListener final : public TransportListener, public LinkObserver {
 public:
  Verdict on_incoming(const Hello&) override { return Verdict::kRefused; }
  void on_link_ready(std::unique_ptr<Link>, const Hello&) override {}
  void on_connect_failed(int, const Status&, Verdict) override {}
  void on_control(Link&, const ControlMessage&) override {}
  void on_link_failed(Link&) override {}
};

TEST(TransportFactory, KnowsTcpByDefault) {
  auto kinds = transport_kinds();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), std::string(kDefaultTransport)), kinds.end());
  EXPECT_TRUE(check_transport_kind("tcp", "transport").ok());
}

TEST(TransportFactory, UnknownKindIsNamed) {
  Status st = check_transport_kind("carrier-pigeon", "transport (TRAINMOVER_TRANSPORT)");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("TRAINMOVER_TRANSPORT"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("carrier-pigeon"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("tcp"), std::string::npos) << st.message();  // the kinds there are
}

TEST(TransportFactory, CreatesATcpTransportOnTheChosenHost) {
  auto loop = EventLoop::create();
  ASSERT_TRUE(loop.ok());
  JobSecret secret = JobSecret::generate().value();
  NoListener listener;
  TransportOptions o;
  o.job_id = 1;
  o.slot = 0;
  auto host = choose_listen_host("", "=lo", "");
  ASSERT_TRUE(host.ok()) << host.status().message();
  o.listen_host = *host;
  auto t = create_transport("tcp", **loop, secret, o, &listener, &listener);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)->local_endpoint().rfind("127.0.0.1:", 0), 0u) << (*t)->local_endpoint();
  auto bad = create_transport("shm-not-built", **loop, secret, o, &listener, &listener);
  EXPECT_FALSE(bad.ok());
}

TEST(ChooseListenHost, AnAddressGivenWins) {
  auto host = choose_listen_host("10.9.8.7", "=no-such-if", "127.0.0.1:1");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(*host, "10.9.8.7");
  auto bad = choose_listen_host("", "=no-such-if", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("TRAINMOVER_SOCKET_IFNAME"), std::string::npos);
}

}  // namespace
}  // namespace trainmover::transport
