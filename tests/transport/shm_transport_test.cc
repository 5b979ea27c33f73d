// The shared-memory links of the transport ("shm", "auto"), between two real
// transports in this process on one event loop: the endpoint they publish,
// the choice per pair (a TCP-only peer gets TCP under "auto" and an error
// naming it under "shm"), the handshake with the job's secret over the local
// socket, data through the rings, and that no segment outlives its links.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/event_loop.h"
#include "common/secret.h"
#include "transport/shm/ring_pool.h"
#include "transport/transport_factory.h"

namespace trainmover::transport {
namespace {

class Collector final : public TransportListener, public LinkObserver {
 public:
  Verdict on_incoming(const Hello&) override { return Verdict::kAccepted; }
  void on_link_ready(std::unique_ptr<Link> link, const Hello&) override {
    links.push_back(std::move(link));
  }
  void on_connect_failed(int, const Status& status, Verdict) override {
    failures.push_back(status);
  }
  void on_control(Link&, const ControlMessage&) override {}
  void on_link_failed(Link&) override {}
  std::vector<std::unique_ptr<Link>> links;
  std::vector<Status> failures;
};

// Ring mappings of this process (a memfd shows as "/memfd:NAME (deleted)").
int ring_mappings() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.find("memfd:trainmover-ring") != std::string::npos) ++count;
  return count;
}

size_t dev_shm_entries() {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/dev/shm", ec);
       !ec && it != std::filesystem::directory_iterator(); ++it)
    ++n;
  return n;
}

class ShmTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loop_ = std::move(EventLoop::create()).value();
    secret_ = std::make_unique<JobSecret>(JobSecret::generate().value());
  }

  std::unique_ptr<Transport> make(std::string_view kind, int slot, Collector& collector,
                                  const JobSecret* secret = nullptr,
                                  std::shared_ptr<shm::RingPool> pool = nullptr) {
    TransportOptions o;
    o.ring_pool = std::move(pool);
    o.job_id = 7;
    o.comm_id = 1;
    o.slot = slot;
    o.instance_id = 100 + static_cast<uint64_t>(slot);
    auto t = create_transport(kind, *loop_, secret ? *secret : *secret_, o, &collector, &collector);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? std::move(t).value() : nullptr;
  }

  bool drive(const std::function<bool()>& done, Transport& a, Transport& b) {
    Deadline deadline = Deadline::after(seconds(10));
    while (!done()) {
      if (deadline.expired()) return false;
      if (!loop_->run_once(std::chrono::milliseconds(5)).ok()) return false;
      a.sweep();
      b.sweep();
    }
    return true;
  }

  // Slot 0 (kind `from`) connects to slot 1 (kind `to`); both links come up.
  void connect_pair(std::string_view from, std::string_view to) {
    a_ = make(from, 0, ca_);
    b_ = make(to, 1, cb_);
    ASSERT_TRUE(a_ && b_);
    a_->connect(1, b_->local_endpoint(), 101);
    ASSERT_TRUE(
        drive([&] { return (!ca_.links.empty() && !cb_.links.empty()) || !ca_.failures.empty(); },
              *a_, *b_));
    ASSERT_TRUE(ca_.failures.empty()) << ca_.failures[0].message();
  }

  // A message each way, compared byte for byte.
  void exchange(size_t bytes) {
    Link& a = *ca_.links[0];
    Link& b = *cb_.links[0];
    std::vector<std::byte> out_a(bytes), out_b(bytes), in_a(bytes), in_b(bytes);
    for (size_t i = 0; i < bytes; ++i) {
      out_a[i] = static_cast<std::byte>(i * 7 + 1);
      out_b[i] = static_cast<std::byte>(i * 13 + 5);
    }
    auto ra = a.post_recv(9, in_a);
    auto rb = b.post_recv(9, in_b);
    auto sa = a.post_send(9, out_a);
    auto sb = b.post_send(9, out_b);
    ASSERT_TRUE(drive(
        [&] {
          return a.failed() || b.failed() ||
                 (a.test(ra) == RequestState::kDone && b.test(rb) == RequestState::kDone &&
                  a.test(sa) == RequestState::kDone && b.test(sb) == RequestState::kDone);
        },
        *a_, *b_));
    ASSERT_FALSE(a.failed()) << a.status().message();
    ASSERT_FALSE(b.failed()) << b.status().message();
    EXPECT_EQ(in_a, out_b);
    EXPECT_EQ(in_b, out_a);
  }

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<JobSecret> secret_;
  Collector ca_, cb_;
  std::unique_ptr<Transport> a_, b_;
};

TEST_F(ShmTransportTest, EndpointsNameTheLocalSocketOnlyWhenSharedMemoryIsOn) {
  Collector c;
  auto tcp = make("tcp", 0, c);
  auto shm = make("shm", 1, c);
  auto automatic = make("auto", 2, c);
  EXPECT_EQ(tcp->local_endpoint().find("/shm/"), std::string::npos) << tcp->local_endpoint();
  EXPECT_NE(shm->local_endpoint().find("/shm/"), std::string::npos) << shm->local_endpoint();
  EXPECT_NE(automatic->local_endpoint().find("/shm/"), std::string::npos);
}

TEST_F(ShmTransportTest, SameHostPeersLinkThroughSharedMemory) {
  size_t shm_files = dev_shm_entries();
  int before = ring_mappings();
  connect_pair("shm", "shm");
  exchange(1);
  // Each side maps its own ring and the peer's: four mappings in this process.
  EXPECT_EQ(ring_mappings(), before + 4);
  exchange(10 << 20);  // wraps the 1 MiB rings
  exchange(0);
  ca_.links.clear();
  cb_.links.clear();
  EXPECT_EQ(ring_mappings(), before) << "a ring outlived its link";
  EXPECT_EQ(dev_shm_entries(), shm_files) << "a file appeared in /dev/shm";
}

TEST_F(ShmTransportTest, ALinkTakesItsRingFromThePoolAndMakesNone) {
  auto pool_a = std::make_shared<shm::RingPool>(TransportOptions{}.shm_ring_bytes);
  auto pool_b = std::make_shared<shm::RingPool>(TransportOptions{}.shm_ring_bytes);
  ASSERT_TRUE(pool_a->fill(2).ok());
  ASSERT_TRUE(pool_b->fill(1).ok());
  const int before = ring_mappings();  // the pools' three rings included
  a_ = make("shm", 0, ca_, nullptr, pool_a);
  b_ = make("shm", 1, cb_, nullptr, pool_b);
  a_->connect(1, b_->local_endpoint(), 101);
  ASSERT_TRUE(
      drive([&] { return (!ca_.links.empty() && !cb_.links.empty()) || !ca_.failures.empty(); },
            *a_, *b_));
  ASSERT_TRUE(ca_.failures.empty()) << ca_.failures[0].message();
  EXPECT_EQ(pool_a->spare(), 1u);
  EXPECT_EQ(pool_b->spare(), 0u);
  exchange(1);
  // Each side's own ring came from its pool; only the peers' were mapped.
  EXPECT_EQ(ring_mappings(), before + 2);
  exchange(10 << 20);  // wraps the pooled rings: they started empty
  ca_.links.clear();
  cb_.links.clear();
  EXPECT_EQ(ring_mappings(), before - 2) << "a pooled ring outlived its link";
}

TEST_F(ShmTransportTest, AutoUsesTcpToAPeerWithoutSharedMemory) {
  int before = ring_mappings();
  connect_pair("auto", "tcp");
  EXPECT_EQ(ring_mappings(), before);
  exchange(64 << 10);
  ca_.links.clear();
  cb_.links.clear();
  connect_pair("tcp", "auto");  // and the other way round
  EXPECT_EQ(ring_mappings(), before);
  exchange(64 << 10);
}

TEST_F(ShmTransportTest, ShmRefusesAPeerItCannotShareMemoryWith) {
  a_ = make("shm", 0, ca_);
  b_ = make("tcp", 1, cb_);
  a_->connect(1, b_->local_endpoint(), 101);
  ASSERT_EQ(ca_.failures.size(), 1u);
  EXPECT_EQ(ca_.failures[0].code(), TM_ERROR_UNSUPPORTED);
  EXPECT_NE(ca_.failures[0].message().find("slot 1"), std::string::npos)
      << ca_.failures[0].message();
  // Another host's endpoint (an identity that is not ours) is refused too.
  std::string elsewhere = b_->local_endpoint() + "/shm/0123456789abcdef/00000000000000aa";
  a_->connect(1, elsewhere, 101);
  ASSERT_EQ(ca_.failures.size(), 2u);
  EXPECT_EQ(ca_.failures[1].code(), TM_ERROR_UNSUPPORTED);
}

TEST_F(ShmTransportTest, TheLocalSocketAdmitsOnlyTheJob) {
  JobSecret other = JobSecret::generate().value();
  a_ = make("shm", 0, ca_, &other);
  b_ = make("shm", 1, cb_);
  int before = ring_mappings();
  a_->connect(1, b_->local_endpoint(), 101);
  ASSERT_TRUE(drive([&] { return !ca_.failures.empty() || !ca_.links.empty(); }, *a_, *b_));
  EXPECT_TRUE(ca_.links.empty());
  EXPECT_TRUE(cb_.links.empty());
  EXPECT_EQ(ring_mappings(), before) << "a ring was made for a process of another job";
}

// A frame that arrives before its receive is posted waits in the ring, and
// the loop sleeps meanwhile: it used to wake on any byte in the ring and spin
// in epoll_wait(0) until the receive came, on a CPU the peers needed.
TEST_F(ShmTransportTest, AFrameWaitingForItsReceiveLetsTheLoopSleep) {
  connect_pair("shm", "shm");
  Link& a = *ca_.links[0];
  Link& b = *cb_.links[0];
  std::vector<std::byte> out(4096, std::byte{42}), in(4096);
  auto sent = b.post_send(3, out);
  ASSERT_TRUE(drive([&] { return b.test(sent) != RequestState::kPending; }, *a_, *b_));
  ASSERT_EQ(b.test(sent), RequestState::kDone);
  int passes = 0;
  Deadline idle = Deadline::after(std::chrono::milliseconds(300));
  while (!idle.expired()) {
    ASSERT_TRUE(loop_->run_once(std::chrono::milliseconds(100)).ok());
    ++passes;
  }
  EXPECT_LE(passes, 20) << "the loop did not sleep while the frame waited";
  auto received = a.post_recv(3, in);
  ASSERT_TRUE(drive([&] { return a.test(received) != RequestState::kPending; }, *a_, *b_));
  EXPECT_EQ(a.test(received), RequestState::kDone);
  EXPECT_EQ(in, out);
}

TEST_F(ShmTransportTest, APeerThatLeavesIsSeenThroughTheSocket) {
  connect_pair("shm", "shm");
  Link& a = *ca_.links[0];
  std::vector<std::byte> in(4096);
  auto r = a.post_recv(1, in);
  cb_.links.clear();  // the peer's link goes away: its socket closes
  ASSERT_TRUE(drive([&] { return a.failed(); }, *a_, *b_));
  EXPECT_EQ(a.test(r), RequestState::kFailed);
  EXPECT_EQ(a.status().code(), TM_ERROR_PEER_FAILED);
  EXPECT_EQ(a.status().failed_slot(), 1);
}

}  // namespace
}  // namespace trainmover::transport
