// Unit tests of the handshake state machine: a connector and an acceptor over
// a socketpair, driven by poll() in the test thread.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/secret.h"
#include "transport/handshake.h"
#include "transport/tcp/handshake_session.h"

namespace trainmover::transport::tcp {
namespace {

constexpr uint64_t kJob = 1000;
constexpr uint64_t kComm = 77;
constexpr uint64_t kEpoch = 2;

const JobSecret& secret_a() {
  static const JobSecret s = JobSecret::from_hex(std::string(32, 'a')).value();
  return s;
}
const JobSecret& secret_b() {
  static const JobSecret s = JobSecret::from_hex(std::string(32, 'b')).value();
  return s;
}

Hello hello(int32_t slot, int32_t target, uint64_t instance) {
  Hello h;
  h.job_id = kJob;
  h.comm_id = kComm;
  h.epoch = kEpoch;
  h.slot = slot;
  h.target_slot = target;
  h.instance_id = instance;
  return h;
}

struct SocketPair {
  SocketPair() {
    int fds[2];
    ok = socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0;
    if (ok) {
      connector = UniqueFd(fds[0]);
      acceptor = UniqueFd(fds[1]);
    }
  }
  bool ok = false;
  UniqueFd connector;
  UniqueFd acceptor;
};

bool finished(const HandshakeSession* s) {
  return s == nullptr || s->state() != HandshakeSession::State::kRunning;
}

short poll_events(const HandshakeSession& s) {
  return static_cast<short>(POLLIN | (s.wants_write() ? POLLOUT : 0));
}

// Advances both sessions until neither is running, or 5 s pass. A session
// that finishes with a failure is closed, as its owner would, so the other
// side sees the connection end.
bool run_both(std::unique_ptr<HandshakeSession>& c, std::unique_ptr<HandshakeSession>& a) {
  Deadline deadline = Deadline::after(seconds(5));
  bool c_closed = false, a_closed = false;
  while (!(finished(c.get()) && finished(a.get()))) {
    if (deadline.expired()) return false;
    c->advance();
    a->advance();
    if (c->state() == HandshakeSession::State::kFailed && !c_closed) {
      c->take_fd().reset();
      c_closed = true;
    }
    if (a->state() == HandshakeSession::State::kFailed && !a_closed) {
      a->take_fd().reset();
      a_closed = true;
    }
    pollfd fds[2] = {{c->fd(), poll_events(*c), 0}, {a->fd(), poll_events(*a), 0}};
    ::poll(fds, 2, 10);
  }
  return true;
}

struct Pair {
  std::unique_ptr<HandshakeSession> connector;
  std::unique_ptr<HandshakeSession> acceptor;
};

Pair make_pair(const JobSecret& connector_secret, const JobSecret& acceptor_secret,
               const Hello& connector_hello, const Hello& acceptor_hello, ExpectedPeer expect,
               AcceptPolicy policy = nullptr) {
  SocketPair sp;
  EXPECT_TRUE(sp.ok);
  auto c = HandshakeSession::connector(std::move(sp.connector), connector_secret, connector_hello,
                                       expect, "acceptor");
  auto a = HandshakeSession::acceptor(std::move(sp.acceptor), acceptor_secret, acceptor_hello,
                                      std::move(policy), "connector");
  EXPECT_TRUE(c.ok() && a.ok());
  return {std::move(c).value(), std::move(a).value()};
}

TEST(HandshakeSession, SameSecretSucceedsWithPeerHellos) {
  Hello ch = hello(0, 1, 0x1111);
  Hello ah = hello(1, 5, 0x2222);
  auto p = make_pair(secret_a(), secret_a(), ch, ah, ExpectedPeer{1, 0x2222});
  ASSERT_TRUE(run_both(p.connector, p.acceptor));
  ASSERT_EQ(p.connector->state(), HandshakeSession::State::kDone)
      << p.connector->status().message();
  ASSERT_EQ(p.acceptor->state(), HandshakeSession::State::kDone) << p.acceptor->status().message();
  EXPECT_EQ(p.connector->verdict(), Verdict::kAccepted);
  EXPECT_EQ(p.acceptor->verdict(), Verdict::kAccepted);
  EXPECT_EQ(p.connector->peer().role, Role::kAcceptor);
  EXPECT_EQ(p.connector->peer().slot, 1);
  EXPECT_EQ(p.connector->peer().target_slot, -1);  // acceptors send -1 whatever they were given
  EXPECT_EQ(p.connector->peer().instance_id, 0x2222u);
  EXPECT_EQ(p.acceptor->peer().role, Role::kConnector);
  EXPECT_EQ(p.acceptor->peer().slot, 0);
  EXPECT_EQ(p.acceptor->peer().target_slot, 1);
  EXPECT_EQ(p.acceptor->peer().instance_id, 0x1111u);
  EXPECT_NE(p.connector->peer().nonce, p.acceptor->peer().nonce);
}

TEST(HandshakeSession, WrongSecretIsAuthFailure) {
  auto p = make_pair(secret_a(), secret_b(), hello(0, 1, 1), hello(1, -1, 2), ExpectedPeer{});
  ASSERT_TRUE(run_both(p.connector, p.acceptor));
  EXPECT_EQ(p.connector->state(), HandshakeSession::State::kFailed);
  EXPECT_EQ(p.connector->status().code(), TM_ERROR_AUTH) << p.connector->status().message();
  EXPECT_NE(p.connector->status().message().find("acceptor"), std::string::npos);
  EXPECT_EQ(p.acceptor->state(), HandshakeSession::State::kFailed);
}

TEST(HandshakeSession, WrongJobIdIsNamed) {
  Hello ah = hello(1, -1, 2);
  ah.job_id = kJob + 1;
  auto p = make_pair(secret_a(), secret_a(), hello(0, 1, 1), ah, ExpectedPeer{});
  ASSERT_TRUE(run_both(p.connector, p.acceptor));
  ASSERT_EQ(p.connector->state(), HandshakeSession::State::kFailed);
  EXPECT_EQ(p.connector->status().code(), TM_ERROR_PROTOCOL);
  EXPECT_NE(p.connector->status().message().find("job id"), std::string::npos)
      << p.connector->status().message();
  EXPECT_NE(p.connector->status().message().find("1001"), std::string::npos)
      << p.connector->status().message();
  EXPECT_EQ(p.connector->status().message().find("different wrong"), std::string::npos)
      << p.connector->status().message();
  EXPECT_EQ(p.acceptor->state(), HandshakeSession::State::kFailed);
}

TEST(HandshakeSession, WrongTargetSlotGetsWrongSlotVerdict) {
  auto p = make_pair(secret_a(), secret_a(), hello(0, 3, 1), hello(1, -1, 2), ExpectedPeer{});
  ASSERT_TRUE(run_both(p.connector, p.acceptor));
  EXPECT_EQ(p.connector->state(), HandshakeSession::State::kFailed);
  EXPECT_EQ(p.connector->verdict(), Verdict::kWrongSlot);
  EXPECT_EQ(p.acceptor->verdict(), Verdict::kWrongSlot);
}

TEST(HandshakeSession, UnexpectedAcceptorSlotIsRefusedByConnector) {
  auto p = make_pair(secret_a(), secret_a(), hello(0, 1, 1), hello(1, -1, 2), ExpectedPeer{2, 0});
  ASSERT_TRUE(run_both(p.connector, p.acceptor));
  ASSERT_EQ(p.connector->state(), HandshakeSession::State::kFailed);
  EXPECT_NE(p.connector->status().message().find("expected slot 2"), std::string::npos)
      << p.connector->status().message();
}

TEST(HandshakeSession, PolicyDuplicateVerdictReachesConnector) {
  int policy_calls = 0;
  auto policy = [&](const Hello& peer) {
    ++policy_calls;
    EXPECT_EQ(peer.slot, 0);
    return Verdict::kDuplicate;
  };
  auto p =
      make_pair(secret_a(), secret_a(), hello(0, 1, 1), hello(1, -1, 2), ExpectedPeer{}, policy);
  ASSERT_TRUE(run_both(p.connector, p.acceptor));
  EXPECT_EQ(policy_calls, 1);
  ASSERT_EQ(p.connector->state(), HandshakeSession::State::kFailed);
  EXPECT_EQ(p.connector->verdict(), Verdict::kDuplicate);
  EXPECT_NE(p.connector->status().message().find(verdict_text(Verdict::kDuplicate)),
            std::string::npos);
  EXPECT_EQ(p.acceptor->state(), HandshakeSession::State::kFailed);
  EXPECT_EQ(p.acceptor->verdict(), Verdict::kDuplicate);
}

TEST(HandshakeSession, PolicyIsNotConsultedForABadProof) {
  // A raw connector that sends a valid hello but a forged proof.
  SocketPair sp;
  ASSERT_TRUE(sp.ok);
  bool policy_called = false;
  auto a = HandshakeSession::acceptor(
      std::move(sp.acceptor), secret_a(), hello(1, -1, 2),
      [&](const Hello&) {
        policy_called = true;
        return Verdict::kAccepted;
      },
      "raw");
  ASSERT_TRUE(a.ok());
  Hello ch = hello(0, 1, 1);
  ch.role = Role::kConnector;
  auto hb = encode_hello(ch);
  ASSERT_EQ(::send(sp.connector.get(), hb.data(), hb.size(), 0), static_cast<ssize_t>(hb.size()));
  std::array<std::byte, kProofSize> forged{};
  ASSERT_EQ(::send(sp.connector.get(), forged.data(), forged.size(), 0),
            static_cast<ssize_t>(forged.size()));
  std::array<std::byte, kHelloSize + kProofSize + kVerdictSize> in{};
  size_t got = 0;
  Deadline deadline = Deadline::after(seconds(5));
  while (got < in.size() && !deadline.expired()) {
    a.value()->advance();
    ssize_t n = ::recv(sp.connector.get(), in.data() + got, in.size() - got, MSG_DONTWAIT);
    if (n > 0) got += static_cast<size_t>(n);
    pollfd pfd{sp.connector.get(), POLLIN, 0};
    ::poll(&pfd, 1, 5);
  }
  ASSERT_EQ(got, in.size());
  auto verdict = parse_verdict(std::span(in).subspan(kHelloSize + kProofSize));
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict.value(), Verdict::kAuthFailed);
  EXPECT_FALSE(policy_called);
  EXPECT_EQ(a.value()->state(), HandshakeSession::State::kFailed);
  EXPECT_EQ(a.value()->status().code(), TM_ERROR_AUTH);
}

TEST(HandshakeSession, GarbageHelloIsProtocolError) {
  SocketPair sp;
  ASSERT_TRUE(sp.ok);
  auto a = HandshakeSession::acceptor(std::move(sp.acceptor), secret_a(), hello(1, -1, 2), nullptr,
                                      "raw");
  ASSERT_TRUE(a.ok());
  std::array<char, kHelloSize> garbage;
  garbage.fill('G');
  ASSERT_EQ(::send(sp.connector.get(), garbage.data(), garbage.size(), 0),
            static_cast<ssize_t>(garbage.size()));
  Deadline deadline = Deadline::after(seconds(5));
  while (a.value()->state() == HandshakeSession::State::kRunning && !deadline.expired()) {
    a.value()->advance();
    pollfd pfd{a.value()->fd(), POLLIN, 0};
    ::poll(&pfd, 1, 5);
  }
  EXPECT_EQ(a.value()->state(), HandshakeSession::State::kFailed);
  EXPECT_EQ(a.value()->status().code(), TM_ERROR_PROTOCOL);
  EXPECT_NE(a.value()->status().message().find("magic"), std::string::npos);
}

TEST(HandshakeSession, PeerClosingMidHandshakeIsPeerFailure) {
  SocketPair sp;
  ASSERT_TRUE(sp.ok);
  auto c = HandshakeSession::connector(std::move(sp.connector), secret_a(), hello(0, 1, 1),
                                       ExpectedPeer{}, "gone");
  ASSERT_TRUE(c.ok());
  sp.acceptor.reset();
  Deadline deadline = Deadline::after(seconds(5));
  while (c.value()->state() == HandshakeSession::State::kRunning && !deadline.expired()) {
    c.value()->advance();
    pollfd pfd{c.value()->fd(), poll_events(*c.value()), 0};
    ::poll(&pfd, 1, 5);
  }
  ASSERT_EQ(c.value()->state(), HandshakeSession::State::kFailed);
  EXPECT_NE(c.value()->status().message().find("gone"), std::string::npos)
      << c.value()->status().message();
}

}  // namespace
}  // namespace trainmover::transport::tcp

namespace trainmover::transport::tcp {
namespace {

// A policy that cannot decide yet parks the handshake: nothing is sent until
// reconsider(), and then the verdict it gives goes out.
TEST(HandshakeSession, DeferredVerdictWaitsForReconsider) {
  bool ready = false;
  int asked = 0;
  auto policy = [&](const Hello&) {
    ++asked;
    return ready ? Verdict::kAccepted : Verdict::kDeferred;
  };
  auto p = make_pair(secret_a(), secret_a(), hello(0, 1, 0x1111), hello(1, 5, 0x2222),
                     ExpectedPeer{1, 0x2222}, policy);
  Deadline until = Deadline::after(std::chrono::milliseconds(200));
  while (!until.expired() && !p.acceptor->deferred()) {
    p.connector->advance();
    p.acceptor->advance();
  }
  ASSERT_TRUE(p.acceptor->deferred());
  for (int i = 0; i < 20; ++i) {  // no verdict reaches the connector meanwhile
    p.connector->advance();
    p.acceptor->advance();
  }
  EXPECT_EQ(p.connector->state(), HandshakeSession::State::kRunning);
  p.acceptor->reconsider();  // still undecided
  EXPECT_TRUE(p.acceptor->deferred());
  ready = true;
  p.acceptor->reconsider();
  ASSERT_TRUE(run_both(p.connector, p.acceptor));
  EXPECT_EQ(p.connector->state(), HandshakeSession::State::kDone)
      << p.connector->status().message();
  EXPECT_EQ(p.acceptor->state(), HandshakeSession::State::kDone);
  EXPECT_EQ(asked, 3);
}

}  // namespace
}  // namespace trainmover::transport::tcp
