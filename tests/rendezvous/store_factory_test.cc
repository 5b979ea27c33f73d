// Tests of the store factory (rendezvous/store_factory.h): the forms of
// TRAINMOVER_STORE, clear errors naming it, real TCP stores opened through
// it, and a store server that binds the interface TRAINMOVER_SOCKET_IFNAME
// names (skipped where the machine has only loopback).
#include "rendezvous/store_factory.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "config.h"  // HAVE_PMIX
#include "transport/tcp/interfaces.h"

namespace trainmover::rendezvous {
namespace {

using std::chrono::seconds;

JobSecret secret() { return JobSecret::from_hex(std::string(32, 'a')).value(); }

TEST(StoreSpec, TcpForms) {
  for (const char* text : {"127.0.0.1:29500", "tcp://127.0.0.1:29500", "tcp://[::1]:7"}) {
    auto spec = StoreSpec::parse(text);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status().message();
    EXPECT_EQ(spec->kind, StoreSpec::Kind::kTcp);
    EXPECT_EQ(spec->tcp_address.find("tcp://"), std::string::npos) << spec->tcp_address;
  }
}

TEST(StoreSpec, BadFormsNameTheVariable) {
  for (const char* text : {"", "tcp://", "tcp://host", "redis://h:1", "tcp://h:99999", ":29500",
                           "pmi", "pmix,", "pmix,tcp://", "pmixtcp://h:1", "pmix,redis://h:1"}) {
    auto spec = StoreSpec::parse(text);
    ASSERT_FALSE(spec.ok()) << "'" << text << "' was accepted";
    EXPECT_EQ(spec.status().code(), TM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(spec.status().message().find(kStoreVariable), std::string::npos)
        << spec.status().message();
  }
}

TEST(StoreSpec, PmixForms) {
  auto plain = StoreSpec::parse("pmix");
  auto layered = StoreSpec::parse("pmix,tcp://10.0.0.1:29500");
#if HAVE_PMIX
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->kind, StoreSpec::Kind::kPmix);
  EXPECT_TRUE(plain->tcp_address.empty());
  ASSERT_TRUE(layered.ok()) << layered.status().message();
  EXPECT_EQ(layered->kind, StoreSpec::Kind::kPmix);
  EXPECT_EQ(layered->tcp_address, "10.0.0.1:29500");
#else
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("PMIx"), std::string::npos);
  EXPECT_FALSE(layered.ok());
#endif
}

TEST(OpenStore, TcpThroughTheFactory) {
  auto server = start_store_server("127.0.0.1:0", secret(), 5);
  ASSERT_TRUE(server.ok()) << server.status().message();
  for (std::string text : {(*server)->address(), "tcp://" + (*server)->address()}) {
    auto spec = StoreSpec::parse(text);
    ASSERT_TRUE(spec.ok());
    auto store = open_store(*spec, secret(), 5, seconds(5));
    ASSERT_TRUE(store.ok()) << store.status().message();
    ASSERT_TRUE((*store)->set("k", text).ok());
    EXPECT_TRUE((*store)->sync(seconds(1)).ok());  // TCP: nothing to wait for
    EXPECT_FALSE((*store)->identity().has_value());
    auto got = (*store)->get("k", seconds(5));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, text);
    auto any_time = open_any_time_store(*spec, secret(), 5, seconds(5));
    ASSERT_TRUE(any_time.ok()) << any_time.status().message();
    EXPECT_EQ((*any_time)->get("k", seconds(5)).value(), text);
  }
}

#if HAVE_PMIX
TEST(OpenStore, PmixAloneHasNoStoreForLater) {
  auto spec = StoreSpec::parse("pmix");
  ASSERT_TRUE(spec.ok());
  auto later = open_any_time_store(*spec, secret(), 5, seconds(1));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(later.status().message().find("pmix,tcp://"), std::string::npos)
      << later.status().message();
  if (std::getenv("PMIX_NAMESPACE") == nullptr) {
    auto store = open_store(*spec, secret(), 5, seconds(1));
    ASSERT_FALSE(store.ok());
    EXPECT_NE(store.status().message().find("PMIx server"), std::string::npos)
        << store.status().message();
  }
}
#endif

// Sets TRAINMOVER_SOCKET_IFNAME for one test.
class ScopedIfname {
 public:
  explicit ScopedIfname(const std::string& value) {
    setenv(transport::tcp::kSocketIfnameVariable, value.c_str(), 1);
  }
  ~ScopedIfname() { unsetenv(transport::tcp::kSocketIfnameVariable); }
};

TEST(StoreServer, EmptyHostBindsTheNamedInterface) {
  {
    ScopedIfname lo("=lo");
    auto server = start_store_server("tcp://:0", secret(), 5);
    ASSERT_TRUE(server.ok()) << server.status().message();
    EXPECT_EQ((*server)->address().rfind("127.0.0.1:", 0), 0u) << (*server)->address();
  }
  auto all = transport::tcp::interface_addresses();
  ASSERT_TRUE(all.ok());
  for (const auto& a : *all) {
    if (a.loopback || a.ipv6) continue;
    ScopedIfname named("=" + a.ifname);
    auto server = start_store_server(":0", secret(), 5);
    ASSERT_TRUE(server.ok()) << server.status().message();
    EXPECT_EQ((*server)->address().rfind(a.address + ":", 0), 0u) << (*server)->address();
    // Reachable there, through the factory.
    auto store =
        open_store(StoreSpec::parse((*server)->address()).value(), secret(), 5, seconds(5));
    ASSERT_TRUE(store.ok()) << store.status().message();
    EXPECT_TRUE((*store)->set("k", "v").ok());
    return;
  }
  GTEST_SKIP() << "no interface besides loopback with an IPv4 address";
}

TEST(StoreServer, BadInterfaceIsNamed) {
  ScopedIfname bad("=no-such-if9");
  auto server = start_store_server(":0", secret(), 5);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(server.status().message().find("TRAINMOVER_SOCKET_IFNAME"), std::string::npos)
      << server.status().message();
  // An explicit host does not consult the filter.
  auto explicit_host = start_store_server("127.0.0.1:0", secret(), 5);
  EXPECT_TRUE(explicit_host.ok()) << explicit_host.status().message();
}

}  // namespace
}  // namespace trainmover::rendezvous
