// SharedRing (transport/shm/ring.h): sizes, what attach() refuses (a peer's
// descriptor is not trusted), bytes through many wraps, and the sleeping
// protocol that decides when a doorbell is rung.
#include "transport/shm/ring.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "transport/shm/ring_pool.h"
#include "transport/shm/ring_stream.h"

#include <cstdlib>
#include <vector>

namespace trainmover::transport::shm {
namespace {

constexpr size_t kRing = 4096;

UniqueFd duplicate(int fd) { return UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, 0)); }

TEST(SharedRing, SizeMustBeAPowerOfTwoWithinLimits) {
  for (size_t bad :
       {size_t{0}, size_t{1000}, kMinRingBytes / 2, kMinRingBytes * 3, kMaxRingBytes * 2}) {
    auto ring = SharedRing::create(bad);
    ASSERT_FALSE(ring.ok()) << bad;
    EXPECT_EQ(ring.status().code(), TM_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_TRUE(SharedRing::create(kMinRingBytes).ok());
}

TEST(SharedRing, AttachRefusesWhatIsNotASealedRing) {
  // A memfd that is not sealed: the peer could shrink it under our mapping.
  UniqueFd unsealed(memfd_create("x", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  ASSERT_TRUE(unsealed.valid());
  ASSERT_EQ(ftruncate(unsealed.get(), 512 + kRing), 0);
  auto r1 = SharedRing::attach(std::move(unsealed));
  ASSERT_FALSE(r1.ok());
  EXPECT_NE(r1.status().message().find("sealed"), std::string::npos) << r1.status().message();
  // A descriptor of something else entirely.
  auto r2 = SharedRing::attach(UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC)));
  EXPECT_FALSE(r2.ok());
  // Sealed, but of a size no ring has.
  UniqueFd odd(memfd_create("y", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  ASSERT_EQ(ftruncate(odd.get(), 512 + 3000), 0);
  ASSERT_EQ(fcntl(odd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
  auto r3 = SharedRing::attach(std::move(odd));
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.status().code(), TM_ERROR_PROTOCOL);
  // Sealed and of a ring's size, but with no ring's header in it.
  UniqueFd blank(memfd_create("z", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  ASSERT_EQ(ftruncate(blank.get(), 512 + kRing), 0);
  ASSERT_EQ(fcntl(blank.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
  auto r4 = SharedRing::attach(std::move(blank));
  ASSERT_FALSE(r4.ok());
  EXPECT_NE(r4.status().message().find("header"), std::string::npos) << r4.status().message();
}

TEST(SharedRing, BytesArriveInOrderThroughManyWraps) {
  auto producer = SharedRing::create(kRing);
  ASSERT_TRUE(producer.ok());
  auto consumer = SharedRing::attach(duplicate(producer->fd()));
  ASSERT_TRUE(consumer.ok()) << consumer.status().message();
  std::vector<std::byte> sent(300000), got;
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<std::byte>(rand() & 0xff);
  size_t offset = 0;
  unsigned seed = 1;
  std::vector<std::byte> scratch(kRing * 2);
  while (got.size() < sent.size()) {
    // Odd chunk sizes, two iovecs, so every wrap position is met.
    size_t want = std::min<size_t>(1 + rand_r(&seed) % 5000, sent.size() - offset);
    size_t half = want / 2;
    iovec iov[2] = {{sent.data() + offset, half}, {sent.data() + offset + half, want - half}};
    offset += producer->produce(iov, 2);
    auto n = consumer->consume(scratch.data(), 1 + rand_r(&seed) % scratch.size());
    ASSERT_TRUE(n.ok());
    got.insert(got.end(), scratch.begin(), scratch.begin() + static_cast<long>(*n));
    if (offset > got.size() + kRing) FAIL() << "produced more than the ring holds";
  }
  EXPECT_EQ(got, sent);
}

TEST(SharedRing, SleepersAreWokenExactlyWhenTheyMustBe) {
  auto producer = SharedRing::create(kRing);
  auto consumer = SharedRing::attach(duplicate(producer->fd()));
  ASSERT_TRUE(producer.ok() && consumer.ok());
  std::byte b[1] = {std::byte{1}};
  iovec one{b, 1};
  EXPECT_FALSE(producer->wake_reader());  // nobody sleeps: no doorbell
  auto asleep = consumer->sleep_reader(0);
  ASSERT_TRUE(asleep.ok());
  EXPECT_TRUE(*asleep);  // empty: the reader may sleep
  EXPECT_EQ(producer->produce(&one, 1), 1u);
  EXPECT_TRUE(producer->wake_reader());   // it slept: ring once
  EXPECT_FALSE(producer->wake_reader());  // and only once
  asleep = consumer->sleep_reader(0);
  EXPECT_FALSE(*asleep);  // new data is there: do not sleep
  // The same byte, already seen and left for later, lets the reader sleep,
  // and the next byte wakes it.
  asleep = consumer->sleep_reader(consumer->head());
  EXPECT_TRUE(*asleep);
  EXPECT_EQ(producer->produce(&one, 1), 1u);
  EXPECT_TRUE(producer->wake_reader());
  asleep = consumer->sleep_reader(1);
  EXPECT_FALSE(*asleep);
  // Fill the ring: the writer sleeps until the reader makes room.
  std::vector<std::byte> big(kRing);
  iovec all{big.data(), big.size()};
  EXPECT_EQ(producer->produce(&all, 1), kRing - 2);
  EXPECT_EQ(producer->produce(&all, 1), 0u);
  EXPECT_TRUE(producer->sleep_writer());
  std::byte sink[16];
  ASSERT_TRUE(consumer->consume(sink, sizeof sink).ok());
  EXPECT_TRUE(consumer->wake_writer());
  EXPECT_FALSE(consumer->wake_writer());
}

TEST(SharedRing, ImpossiblePositionsFromThePeerAreAProtocolError) {
  auto producer = SharedRing::create(kRing);
  ASSERT_TRUE(producer.ok());
  // The "peer" scribbles a head far beyond what the ring can hold.
  void* map = mmap(nullptr, 512 + kRing, PROT_READ | PROT_WRITE, MAP_SHARED, producer->fd(), 0);
  ASSERT_NE(map, MAP_FAILED);
  auto consumer = SharedRing::attach(duplicate(producer->fd()));
  ASSERT_TRUE(consumer.ok());
  static_cast<uint64_t*>(map)[64 / 8] = 1ull << 40;  // line 1: head
  std::byte sink[64];
  auto n = consumer->consume(sink, sizeof sink);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), TM_ERROR_PROTOCOL);
  munmap(map, 512 + kRing);
}

// What a hostile or broken peer can put first on the socket instead of its
// ring: the stream fails with EPROTO (the link then names the slot), and
// never maps anything it was not meant to.
class PeerRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    peer_ = UniqueFd(fds[0]);
    auto stream = RingStream::create(UniqueFd(fds[1]), kRing);
    ASSERT_TRUE(stream.ok()) << stream.status().message();
    stream_ = std::move(stream).value();
  }
  // Sends one byte, with `fd` attached when it is not -1.
  void send_first(char byte, int fd) {
    iovec iov{&byte, 1};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
      cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
    }
    ASSERT_EQ(sendmsg(peer_.get(), &msg, MSG_NOSIGNAL), 1);
  }
  void expect_refused() {
    stream_->on_wakeup(EPOLLIN);
    std::byte b[8];
    errno = 0;
    EXPECT_EQ(stream_->read(b, sizeof b), -1);
    EXPECT_EQ(errno, EPROTO);
    iovec iov{b, sizeof b};
    EXPECT_EQ(stream_->write(&iov, 1), -1) << "a failed stream stays failed";
  }
  UniqueFd peer_;
  std::unique_ptr<RingStream> stream_;
};

TEST_F(PeerRingTest, APlainByteWithoutARingIsRefused) {
  send_first('R', -1);
  expect_refused();
}

TEST_F(PeerRingTest, AnUnsealedSegmentIsRefused) {
  UniqueFd unsealed(memfd_create("x", MFD_CLOEXEC));
  ASSERT_EQ(ftruncate(unsealed.get(), 512 + kRing), 0);
  send_first('R', unsealed.get());
  expect_refused();
}

TEST_F(PeerRingTest, AnotherKindOfFileIsRefused) {
  UniqueFd file(open("/dev/zero", O_RDWR | O_CLOEXEC));
  send_first('R', file.get());
  expect_refused();
}

TEST_F(PeerRingTest, ThePeersRealRingIsTaken) {
  auto ring = SharedRing::create(kRing);
  ASSERT_TRUE(ring.ok());
  std::byte hello[3] = {std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
  iovec iov{hello, 3};
  ASSERT_EQ(ring->produce(&iov, 1), 3u);
  send_first('R', ring->fd());
  stream_->on_wakeup(EPOLLIN);
  std::byte got[8];
  ASSERT_EQ(stream_->read(got, sizeof got), 3);
  EXPECT_EQ(std::memcmp(got, hello, 3), 0);
  peer_.reset();  // the peer's process ends: the end of the stream after its bytes
  stream_->on_wakeup(EPOLLIN);
  EXPECT_EQ(stream_->read(got, sizeof got), 0);
}

TEST(RingPool, GivesFreshRingsOfItsSizeAndNoneOfAnother) {
  RingPool pool(size_t{64} << 10);
  EXPECT_FALSE(pool.take(size_t{64} << 10).has_value()) << "an empty pool gave a ring";
  ASSERT_TRUE(pool.fill(2).ok());
  EXPECT_EQ(pool.spare(), 2u);
  EXPECT_FALSE(pool.take(size_t{128} << 10).has_value()) << "a ring of another size";
  auto ring = pool.take(size_t{64} << 10);
  ASSERT_TRUE(ring.has_value());
  EXPECT_EQ(ring->capacity(), size_t{64} << 10);
  EXPECT_EQ(ring->head(), 0u);  // never written: like a new one
  EXPECT_EQ(pool.spare(), 1u);
  EXPECT_FALSE(RingPool(3).fill(1).ok()) << "a size SharedRing refuses";
}

TEST(RingPool, GrowRefillsToTheSumOfEveryOwnersWish) {
  RingPool pool(size_t{64} << 10);
  ASSERT_TRUE(pool.grow(1).ok());                        // one owner's spare
  ASSERT_TRUE(pool.take(size_t{64} << 10).has_value());  // another's first link took it
  ASSERT_TRUE(pool.grow(1).ok());                        // the other owner's spare
  EXPECT_EQ(pool.spare(), 2u);
}

}  // namespace
}  // namespace trainmover::transport::shm
