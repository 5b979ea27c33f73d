// PeerTable's epoch fence: which handshakes it accepts before, during and
// after a switch. A process that no longer serves a slot (a zombie), or that
// speaks an old epoch, never gets a link.
#include <gtest/gtest.h>

#include "comm/peers.h"
#include "common/event_loop.h"
#include "common/secret.h"
#include "transport/tcp/tcp_transport.h"

namespace trainmover {
namespace {

using transport::Hello;
using transport::Verdict;

constexpr uint64_t kLeaver = 0x1111, kJoiner = 0x2222, kStayerA = 0xAAAA, kStayerC = 0xCCCC,
                   kStayerD = 0xDDDD;

Hello hello(int slot, uint64_t epoch, uint64_t instance) {
  Hello h;
  h.slot = slot;
  h.epoch = epoch;
  h.instance_id = instance;
  h.target_slot = 0;
  return h;
}

class PeersEpochTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::create();
    ASSERT_TRUE(loop.ok());
    loop_ = std::move(loop).value();
    auto secret = JobSecret::generate();
    ASSERT_TRUE(secret.ok());
    secret_ = std::make_unique<JobSecret>(std::move(secret).value());
    transport::tcp::TcpTransport::Options o;
    o.slot = 0;
    o.instance_id = kStayerA;
    auto t = transport::tcp::TcpTransport::create(
        *loop_, *secret_, o, transport::tcp::LocalLinks::kTcp, &peers_, &peers_);
    ASSERT_TRUE(t.ok()) << t.status().message();
    transport_ = std::move(t).value();
    peers_.set_transport(transport_.get());
  }
  void TearDown() override {
    peers_.clear();
    transport_.reset();
  }

  // Slot 0 of 4 prepares epoch 1, in which slot 1's process is replaced.
  void prepare() { peers_.prepare_next(1, {1}, {kStayerA, kJoiner, kStayerC, kStayerD}); }

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<JobSecret> secret_;
  PeerTable peers_{4, 0};
  std::unique_ptr<transport::tcp::TcpTransport> transport_;
};

TEST_F(PeersEpochTest, CurrentEpochAcceptsAnyProcessUntilItsInstanceIsKnown) {
  EXPECT_EQ(peers_.on_incoming(hello(1, 0, kLeaver)), Verdict::kAccepted);
  // A joiner of an epoch not prepared yet waits for the decision.
  EXPECT_EQ(peers_.on_incoming(hello(1, 1, kJoiner)), Verdict::kDeferred);
}

TEST_F(PeersEpochTest, PreparedEpochAcceptsOnlyTheJoinerOfALinkToOpen) {
  prepare();
  EXPECT_EQ(peers_.on_incoming(hello(1, 1, kJoiner)), Verdict::kAccepted);
  EXPECT_EQ(peers_.on_incoming(hello(1, 1, kLeaver)), Verdict::kRefused);  // zombie
  // Not a link to open now: decided once this process has switched.
  EXPECT_EQ(peers_.on_incoming(hello(2, 1, kStayerC)), Verdict::kDeferred);
  EXPECT_EQ(peers_.on_incoming(hello(2, 1, kLeaver)), Verdict::kRefused);  // not in the view
  EXPECT_EQ(peers_.on_incoming(hello(1, 2, kJoiner)), Verdict::kDeferred);
  EXPECT_EQ(peers_.next_missing(), std::vector<int>{1});
}

TEST_F(PeersEpochTest, AfterTheSwitchOldEpochsAndOldProcessesAreRefused) {
  prepare();
  // The joiner never connected: the switch happens (every process moves on)
  // and reports the missing link, naming the slot.
  Status st = peers_.switch_to_next();
  EXPECT_EQ(st.code(), TM_ERROR_PEER_FAILED);
  EXPECT_EQ(st.failed_slot(), 1);
  EXPECT_NE(st.message().find("joining slot 1"), std::string::npos) << st.message();
  EXPECT_EQ(peers_.epoch(), 1u);
  EXPECT_TRUE(peers_.failed());
  EXPECT_EQ(peers_.on_incoming(hello(1, 0, kLeaver)), Verdict::kWrongEpoch);
  EXPECT_EQ(peers_.on_incoming(hello(1, 1, kLeaver)), Verdict::kRefused);
}

TEST_F(PeersEpochTest, SwitchWithoutPrepareIsAnError) {
  EXPECT_EQ(peers_.switch_to_next().code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(peers_.epoch(), 0u);
}

}  // namespace
}  // namespace trainmover
