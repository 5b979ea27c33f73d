// Tests of the rendezvous store: a real TcpStoreServer on 127.0.0.1:0 and
// TcpStore clients in threads of the test process, plus raw TCP clients that
// misbehave.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/secret.h"
#include "rendezvous/store_protocol.h"
#include "rendezvous/tcp_store.h"
#include "rendezvous/tcp_store_server.h"
#include "transport/frame.h"
#include "transport/handshake.h"
#include "transport/tcp/socket.h"

namespace trainmover::rendezvous {
namespace {

constexpr uint64_t kJob = 5150;

const JobSecret& good_secret() {
  static const JobSecret s = JobSecret::from_hex("00112233445566778899aabbccddeeff").value();
  return s;
}
const JobSecret& bad_secret() {
  static const JobSecret s = JobSecret::from_hex("ffeeddccbbaa99887766554433221100").value();
  return s;
}

class TcpStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = TcpStoreServer::start("127.0.0.1:0", good_secret(), kJob);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
  }

  std::unique_ptr<TcpStore> client() {
    auto c = TcpStore::connect(server_->address(), good_secret(), kJob, seconds(5));
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // A blocking TCP socket to the server with 5 s receive/send timeouts.
  UniqueFd raw_connect() {
    auto hp = transport::tcp::split_host_port(server_->address());
    EXPECT_TRUE(hp.ok());
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(hp->second);
    ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    timeval tv{5, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    return fd;
  }

  std::unique_ptr<TcpStoreServer> server_;
};

bool send_all(int fd, std::span<const std::byte> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool recv_all(int fd, std::span<std::byte> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::recv(fd, bytes.data() + done, bytes.size() - done, 0);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// True when the server closes `fd` (EOF or reset) within the socket timeout,
// without sending anything first.
bool closed_without_reply(int fd) {
  std::byte b;
  ssize_t n = ::recv(fd, &b, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

TEST_F(TcpStoreTest, SetThenGet) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->set("endpoint/0", "10.0.0.1:4000").ok());
  auto v = c->get("endpoint/0", seconds(1));
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v.value(), "10.0.0.1:4000");
  ASSERT_TRUE(c->set("endpoint/0", std::string("\0\1\2", 3)).ok());
  EXPECT_EQ(c->get("endpoint/0", seconds(1)).value(), std::string("\0\1\2", 3));
  ASSERT_TRUE(c->set("big", std::string(kMaxValueBytes, 'v')).ok());
  EXPECT_EQ(c->get("big", seconds(1)).value().size(), kMaxValueBytes);
}

TEST_F(TcpStoreTest, GetWaitsUntilAnotherClientSets) {
  auto waiter = client();
  auto setter = client();
  ASSERT_TRUE(waiter && setter);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(setter->set("late", "value").ok());
  });
  auto start = Clock::now();
  auto v = waiter->get("late", seconds(10));
  double waited = to_seconds(Clock::now() - start);
  later.join();
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v.value(), "value");
  EXPECT_GE(waited, 0.25);
  EXPECT_LT(waited, 5.0);
}

TEST_F(TcpStoreTest, GetWaitsUntilAnotherClientAdds) {
  auto waiter = client();
  auto adder = client();
  ASSERT_TRUE(waiter && adder);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(adder->add("counter-late", 3).ok());
  });
  auto start = Clock::now();
  auto v = waiter->get("counter-late", seconds(10));
  double waited = to_seconds(Clock::now() - start);
  later.join();
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v.value(), "3");
  EXPECT_LT(waited, 5.0);
}

TEST_F(TcpStoreTest, GetTimesOutNamingTheKey) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  auto start = Clock::now();
  auto v = c->get("never/set", seconds(0.5));
  double waited = to_seconds(Clock::now() - start);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), TM_ERROR_TIMEOUT) << v.status().message();
  EXPECT_NE(v.status().message().find("never/set"), std::string::npos) << v.status().message();
  EXPECT_GE(waited, 0.45);
  EXPECT_LT(waited, 1.5);
  // The connection is still usable afterwards.
  EXPECT_TRUE(c->set("after", "timeout").ok());
  EXPECT_EQ(c->get("after", seconds(1)).value(), "timeout");
}

TEST_F(TcpStoreTest, AddCountsAcrossClients) {
  auto a = client();
  auto b = client();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->add("counter", 1).value(), 1);
  EXPECT_EQ(b->add("counter", 5).value(), 6);
  EXPECT_EQ(a->add("counter", -10).value(), -4);
  EXPECT_EQ(b->add("other", 0).value(), 0);
}

TEST_F(TcpStoreTest, ConcurrentAddsAreNotLost) {
  constexpr int kThreads = 4, kAdds = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto c = client();
      if (!c) return;
      for (int i = 0; i < kAdds; ++i) EXPECT_TRUE(c->add("n", 1).ok());
    });
  }
  for (auto& t : threads) t.join();
  auto c = client();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->add("n", 0).value(), kThreads * kAdds);
}

// A rendezvous of N slots makes O(N) small requests per process; each must
// cost a round trip, not a delayed-ACK timer (Nagle's algorithm holding the
// payload written after the frame header).
TEST_F(TcpStoreTest, CompareSetIfAbsentAndIfEqual) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  auto first = c->compare_set("cas", std::nullopt, "one");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->won);
  EXPECT_EQ(first->current, "one");
  auto again = c->compare_set("cas", std::nullopt, "two");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->won);
  EXPECT_EQ(again->current, "one");
  auto wrong = c->compare_set("cas", std::string("zero"), "two");
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE(wrong->won);
  EXPECT_EQ(wrong->current, "one");
  auto right = c->compare_set("cas", std::string("one"), "two");
  ASSERT_TRUE(right.ok());
  EXPECT_TRUE(right->won);
  EXPECT_EQ(c->get("cas", seconds(1)).value(), "two");
  auto absent = c->compare_set("never-set", std::string("x"), "y");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->won);
  EXPECT_FALSE(absent->current.has_value());
  EXPECT_FALSE(c->get("never-set", std::chrono::milliseconds(50)).ok());
}

TEST_F(TcpStoreTest, CompareSetWakesAWaitingGet) {
  auto waiter = client();
  auto setter = client();
  ASSERT_TRUE(waiter && setter);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(setter->compare_set("woken", std::nullopt, "by cas").value().won);
  });
  auto v = waiter->get("woken", seconds(10));
  later.join();
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v.value(), "by cas");
}

// Writers racing to publish one key from their own connections: exactly one
// wins, and every loser is told the winner's value.
TEST_F(TcpStoreTest, RacingCompareSetsHaveOneWinner) {
  constexpr int kWriters = 8;
  constexpr int kRounds = 20;
  std::vector<std::unique_ptr<TcpStore>> clients;
  for (int i = 0; i < kWriters; ++i) clients.push_back(client());
  for (int round = 0; round < kRounds; ++round) {
    std::string key = str_cat("race/", round);
    std::vector<Result<Store::CompareSetResult>> results(kWriters, error(TM_ERROR_INTERNAL, "-"));
    std::vector<std::thread> threads;
    for (int i = 0; i < kWriters; ++i) {
      threads.emplace_back([&, i] {
        results[static_cast<size_t>(i)] =
            clients[static_cast<size_t>(i)]->compare_set(key, std::nullopt, str_cat("writer ", i));
      });
    }
    for (auto& t : threads) t.join();
    int winners = 0;
    std::string stored = clients[0]->get(key, seconds(1)).value();
    for (auto& r : results) {
      ASSERT_TRUE(r.ok()) << r.status().message();
      winners += r->won ? 1 : 0;
      EXPECT_EQ(r->current, stored);
    }
    EXPECT_EQ(winners, 1) << key;
  }
}

TEST_F(TcpStoreTest, CompareSetTooLargeIsRejectedByTheClient) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  auto r = c->compare_set("k", std::string(kMaxValueBytes / 2 + 1, 'e'),
                          std::string(kMaxValueBytes / 2, 'v'));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), TM_ERROR_INVALID_ARGUMENT);
  auto ok = c->compare_set("k", std::nullopt, std::string(kMaxValueBytes, 'v'));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_TRUE(ok->won);
  auto lost = c->compare_set("k", std::nullopt, "x");  // the reply carries the whole value
  ASSERT_TRUE(lost.ok()) << lost.status().message();
  EXPECT_EQ(lost->current->size(), kMaxValueBytes);
}

TEST_F(TcpStoreTest, SmallRequestsDoNotWaitForDelayedAcks) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  constexpr int kRequests = 50;
  auto start = Clock::now();
  for (int i = 0; i < kRequests; ++i) ASSERT_TRUE(c->add("fast", 1).ok());
  double elapsed = to_seconds(Clock::now() - start);
  EXPECT_LT(elapsed, 1.0) << kRequests << " requests took " << elapsed << " s";
}

TEST_F(TcpStoreTest, BadKeysAreRejectedByTheClient) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->set("", "v").code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c->set(std::string(kMaxKeyBytes + 1, 'k'), "v").code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c->set("k", std::string(kMaxValueBytes + 1, 'v')).code(), TM_ERROR_INVALID_ARGUMENT);
}

TEST_F(TcpStoreTest, WrongSecretIsRefused) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->set("secret/key", "private").ok());
  auto intruder = TcpStore::connect(server_->address(), bad_secret(), kJob, seconds(2));
  ASSERT_FALSE(intruder.ok());
  EXPECT_EQ(intruder.status().code(), TM_ERROR_AUTH) << intruder.status().message();
  // It reached the store at once: the error says that it was refused, and why.
  EXPECT_NE(intruder.status().message().find("refused this client"), std::string::npos)
      << intruder.status().message();
  EXPECT_EQ(intruder.status().message().find("cannot reach"), std::string::npos)
      << intruder.status().message();
  auto other_job = TcpStore::connect(server_->address(), good_secret(), kJob + 1, seconds(2));
  EXPECT_FALSE(other_job.ok());
  EXPECT_NE(other_job.status().message().find("refused this client"), std::string::npos)
      << other_job.status().message();
}

TEST_F(TcpStoreTest, ForgedProofCannotReadKeys) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->set("secret/key", "private").ok());
  UniqueFd fd = raw_connect();
  transport::Hello hello;
  hello.role = transport::Role::kConnector;
  hello.job_id = kJob;
  hello.comm_id = kStoreCommId;
  ASSERT_TRUE(send_all(fd.get(), transport::encode_hello(hello)));
  std::array<std::byte, transport::kHelloSize + transport::kProofSize> reply;
  ASSERT_TRUE(recv_all(fd.get(), reply));
  std::array<std::byte, transport::kProofSize> forged{};
  ASSERT_TRUE(send_all(fd.get(), forged));
  std::array<std::byte, transport::kVerdictSize> verdict_bytes;
  if (recv_all(fd.get(), verdict_bytes)) {
    auto verdict = transport::parse_verdict(verdict_bytes);
    ASSERT_TRUE(verdict.ok());
    EXPECT_EQ(verdict.value(), transport::Verdict::kAuthFailed);
  }
  // Whatever it sends next, it gets no value back.
  auto payload = encode_request({StoreOp::kGet, "secret/key", "", 0, 100});
  transport::FrameHeader h;
  h.kind = transport::FrameKind::kStoreRequest;
  h.job_id = kJob;
  h.tag = 1;
  h.length = payload.size();
  send_all(fd.get(), transport::encode_frame_header(h));
  send_all(fd.get(), payload);
  EXPECT_TRUE(closed_without_reply(fd.get()));
}

TEST_F(TcpStoreTest, GarbageClientIsDroppedAndOthersAreServed) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  UniqueFd fd = raw_connect();
  std::string garbage(200, 'G');
  ASSERT_TRUE(send_all(fd.get(), as_bytes(garbage)));
  EXPECT_TRUE(closed_without_reply(fd.get()));
  ASSERT_TRUE(c->set("still", "serving").ok());
  auto fresh = client();
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh->get("still", seconds(1)).value(), "serving");
}

TEST_F(TcpStoreTest, BadFrameAfterHandshakeDropsOnlyThatClient) {
  auto c = client();
  ASSERT_NE(c, nullptr);
  // A client that authenticates properly, then sends a corrupt frame header.
  auto victim_fd = raw_connect();
  transport::Hello hello;
  hello.role = transport::Role::kConnector;
  hello.job_id = kJob;
  hello.comm_id = kStoreCommId;
  auto hello_bytes = transport::encode_hello(hello);
  ASSERT_TRUE(send_all(victim_fd.get(), hello_bytes));
  std::array<std::byte, transport::kHelloSize + transport::kProofSize> reply;
  ASSERT_TRUE(recv_all(victim_fd.get(), reply));
  Mac proof = transport::compute_proof(good_secret(), transport::Role::kConnector, hello_bytes,
                                       std::span(reply).first(transport::kHelloSize));
  ASSERT_TRUE(send_all(victim_fd.get(), proof));
  std::array<std::byte, transport::kVerdictSize> verdict_bytes;
  ASSERT_TRUE(recv_all(victim_fd.get(), verdict_bytes));
  ASSERT_EQ(transport::parse_verdict(verdict_bytes).value(), transport::Verdict::kAccepted);
  std::array<std::byte, transport::kFrameHeaderSize> junk;
  junk.fill(std::byte{0x5A});
  ASSERT_TRUE(send_all(victim_fd.get(), junk));
  EXPECT_TRUE(closed_without_reply(victim_fd.get()));
  ASSERT_TRUE(c->set("k", "v").ok());
  EXPECT_EQ(c->get("k", seconds(1)).value(), "v");
}

}  // namespace
}  // namespace trainmover::rendezvous
