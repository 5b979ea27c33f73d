// Unit tests of StreamLink over a socketpair, with a real EventLoop driven in
// the test thread, once over the socket itself ("tcp": a SocketStream) and
// once over shared-memory rings beside it ("shm": a RingStream with small
// rings, so that large frames wrap many times). One end is a StreamLink; the
// other is either a second StreamLink or a raw stream of the same kind that
// the test writes hand-made frames into.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/event_loop.h"
#include "common/unique_fd.h"
#include "transport/frame.h"
#include "transport/shm/ring_stream.h"
#include "transport/stream_link.h"
#include "transport/tcp/socket_stream.h"

namespace trainmover::transport::tcp {
namespace {

constexpr uint64_t kJob = 42;
constexpr uint64_t kEpoch = 3;
constexpr uint64_t kMaxFrame = 16 << 20;
constexpr std::byte kGuard{0xA5};
constexpr size_t kGuardBytes = 4096;

class RecordingObserver final : public LinkObserver {
 public:
  void on_control(Link&, const ControlMessage& message) override { controls.push_back(message); }
  void on_link_failed(Link&) override { ++failures; }
  std::vector<ControlMessage> controls;
  int failures = 0;
};

StreamLink::Options options_for(int32_t local, int32_t peer) {
  StreamLink::Options o;
  o.job_id = kJob;
  o.epoch = kEpoch;
  o.local_slot = local;
  o.peer_slot = peer;
  o.max_frame_bytes = kMaxFrame;
  o.peer_name = "slot " + std::to_string(peer);
  return o;
}

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>(1 + (i * 131 + seed) % 251);  // never zero
  return v;
}

// A receive buffer of `length` bytes followed by a guard region.
struct GuardedBuffer {
  explicit GuardedBuffer(size_t length) : length_(length), storage_(length + kGuardBytes, kGuard) {}
  std::span<std::byte> span() { return {storage_.data(), length_}; }
  bool guard_intact() const {
    return std::all_of(storage_.begin() + static_cast<std::ptrdiff_t>(length_), storage_.end(),
                       [](std::byte b) { return b == kGuard; });
  }
  bool untouched() const {
    return std::all_of(storage_.begin(), storage_.end(), [](std::byte b) { return b == kGuard; });
  }
  size_t length_;
  std::vector<std::byte> storage_;
};

constexpr size_t kTestRingBytes = 64 << 10;

class StreamLinkTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto loop = EventLoop::create();
    ASSERT_TRUE(loop.ok()) << loop.status().message();
    loop_ = std::move(loop).value();
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    left_fd_ = UniqueFd(fds[0]);
    right_fd_ = UniqueFd(fds[1]);
    raw_.reset();
  }

  std::unique_ptr<ByteStream> make_stream(UniqueFd fd) {
    if (GetParam() == "tcp") return socket_stream(std::move(fd));
    auto rings = shm::RingStream::create(std::move(fd), kTestRingBytes);
    EXPECT_TRUE(rings.ok()) << rings.status().message();
    return rings.ok() ? std::move(rings).value() : nullptr;
  }

  // The link under test on the right end, as slot 1 talking to slot 0.
  std::unique_ptr<StreamLink> make_right(RecordingObserver* observer = nullptr) {
    auto link =
        StreamLink::create(*loop_, make_stream(std::move(right_fd_)), options_for(1, 0), observer);
    EXPECT_TRUE(link.ok()) << link.status().message();
    return link.ok() ? std::move(link).value() : nullptr;
  }
  std::unique_ptr<StreamLink> make_left(RecordingObserver* observer = nullptr) {
    auto link =
        StreamLink::create(*loop_, make_stream(std::move(left_fd_)), options_for(0, 1), observer);
    EXPECT_TRUE(link.ok()) << link.status().message();
    return link.ok() ? std::move(link).value() : nullptr;
  }

  // Runs the loop until `done` or 10 s; returns done().
  bool drive(const std::function<bool()>& done) {
    Deadline deadline = Deadline::after(seconds(10));
    while (!done()) {
      if (deadline.expired()) return false;
      Status st = loop_->run_once(std::chrono::milliseconds(10));
      if (!st.ok()) return false;
    }
    return true;
  }

  // Runs the loop for a few rounds, for checks that nothing happens.
  void settle() {
    for (int i = 0; i < 20; ++i) (void)loop_->run_once(std::chrono::milliseconds(2));
  }

  // Writes raw bytes from the left end (the "peer"), as a stream of the
  // kind under test.
  void raw_write(std::span<const std::byte> bytes) {
    if (raw_ == nullptr) raw_ = make_stream(std::move(left_fd_));
    ASSERT_NE(raw_, nullptr);
    size_t done = 0;
    Deadline deadline = Deadline::after(seconds(10));
    while (done < bytes.size() && !deadline.expired()) {
      iovec iov{const_cast<std::byte*>(bytes.data() + done), bytes.size() - done};
      ssize_t n = raw_->write(&iov, 1);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else {
        loop_->run_once(std::chrono::milliseconds(1)).message();
        raw_->on_wakeup(EPOLLIN);
      }
    }
    ASSERT_EQ(done, bytes.size());
  }
  // The raw peer's process ends.
  void close_raw_peer() {
    raw_.reset();
    left_fd_.reset();
  }

  FrameHeader peer_header(uint64_t tag, uint64_t length) const {
    FrameHeader h;
    h.kind = FrameKind::kData;
    h.job_id = kJob;
    h.epoch = kEpoch;
    h.tag = tag;
    h.length = length;
    h.src_slot = 0;
    return h;
  }
  void raw_frame(const FrameHeader& h, std::span<const std::byte> payload) {
    auto bytes = encode_frame_header(h);
    raw_write(bytes);
    raw_write(payload);
  }

  std::unique_ptr<EventLoop> loop_;
  UniqueFd left_fd_;
  UniqueFd right_fd_;
  std::unique_ptr<ByteStream> raw_;
};

constexpr int kThePeer = -2;

// `blamed`: the failed slot the status must name (kThePeer: the link's peer).
::testing::AssertionResult FailedWith(const Link& link, tm_result_t code, const std::string& text,
                                      int blamed = kThePeer) {
  if (!link.failed()) return ::testing::AssertionFailure() << "link did not fail";
  if (link.status().code() != code) {
    return ::testing::AssertionFailure()
           << "code " << link.status().code() << ": " << link.status().message();
  }
  if (link.status().message().find(text) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "'" << link.status().message() << "' does not name '" << text << "'";
  }
  if (link.status().failed_slot() != (blamed == kThePeer ? link.peer_slot() : blamed)) {
    return ::testing::AssertionFailure() << "failed_slot " << link.status().failed_slot();
  }
  return ::testing::AssertionSuccess();
}

TEST_P(StreamLinkTest, DataRoundTripsAtSeveralSizes) {
  auto left = make_left();
  auto right = make_right();
  const size_t sizes[] = {0, 1, 64 << 10, 8 << 20};
  std::vector<std::vector<std::byte>> sent;
  std::vector<GuardedBuffer> received;
  std::vector<RequestHandle> sends, recvs;
  for (size_t i = 0; i < std::size(sizes); ++i) {
    sent.push_back(pattern(sizes[i], static_cast<uint8_t>(i)));
    received.emplace_back(sizes[i]);
  }
  for (size_t i = 0; i < std::size(sizes); ++i) {
    sends.push_back(left->post_send(100 + i, sent[i]));
    recvs.push_back(right->post_recv(100 + i, received[i].span()));
  }
  ASSERT_TRUE(drive([&] {
    return right->failed() || left->failed() || right->test(recvs.back()) != RequestState::kPending;
  }));
  ASSERT_FALSE(right->failed()) << right->status().message();
  ASSERT_FALSE(left->failed()) << left->status().message();
  ASSERT_TRUE(drive([&] { return left->test(sends.back()) == RequestState::kDone; }));
  for (size_t i = 0; i < std::size(sizes); ++i) {
    EXPECT_EQ(right->test(recvs[i]), RequestState::kDone) << i;
    EXPECT_EQ(left->test(sends[i]), RequestState::kDone) << i;
    EXPECT_TRUE(std::equal(sent[i].begin(), sent[i].end(), received[i].span().begin()))
        << "size " << sizes[i];
    EXPECT_TRUE(received[i].guard_intact()) << "size " << sizes[i];
  }
  EXPECT_EQ(left->pending_sends(), 0u);
  EXPECT_EQ(right->pending_recvs(), 0u);
}

TEST_P(StreamLinkTest, FrameWaitsForItsReceive) {
  auto left = make_left();
  auto right = make_right();
  auto data = pattern(100, 7);
  auto send = left->post_send(5, data);
  ASSERT_TRUE(drive([&] { return left->test(send) == RequestState::kDone; }));
  for (int i = 0; i < 5; ++i) loop_->run_once(std::chrono::milliseconds(2)).message();
  EXPECT_FALSE(right->failed());
  GuardedBuffer buf(100);
  auto recv = right->post_recv(5, buf.span());
  ASSERT_TRUE(drive([&] { return right->test(recv) != RequestState::kPending; }));
  EXPECT_EQ(right->test(recv), RequestState::kDone);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), buf.span().begin()));
}

TEST_P(StreamLinkTest, TagMismatchNamesBothTags) {
  auto left = make_left();
  RecordingObserver observer;
  auto right = make_right(&observer);
  auto data = pattern(64, 1);
  left->post_send(0xAAA, data);
  GuardedBuffer buf(64);
  auto recv = right->post_recv(0xBBB, buf.span());
  ASSERT_TRUE(drive([&] { return right->failed(); }));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PROTOCOL, "tag 0xaaa", -1));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PROTOCOL, "tag 0xbbb", -1));
  EXPECT_EQ(right->test(recv), RequestState::kFailed);
  EXPECT_EQ(observer.failures, 1);
  EXPECT_TRUE(buf.untouched());
}

TEST_P(StreamLinkTest, LengthMismatchFailsWithoutWritingTheBuffer) {
  auto left = make_left();
  auto right = make_right();
  auto data = pattern(100, 1);
  left->post_send(9, data);
  GuardedBuffer buf(64);
  auto recv = right->post_recv(9, buf.span());
  ASSERT_TRUE(drive([&] { return right->failed(); }));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PROTOCOL, "of 100 bytes", -1));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PROTOCOL, "of 64 bytes", -1));
  EXPECT_EQ(right->test(recv), RequestState::kFailed);
  EXPECT_TRUE(buf.untouched());
}

struct BadFrameCase {
  const char* name;
  std::function<void(FrameHeader&)> corrupt;
  bool break_crc;
  const char* expected_text;
};

TEST_P(StreamLinkTest, BadFramesFromThePeerKillTheLinkBeforeAnyPayloadLands) {
  const BadFrameCase cases[] = {
      {"job id", [](FrameHeader& h) { h.job_id = kJob + 1; }, false, "job id 43"},
      {"src slot", [](FrameHeader& h) { h.src_slot = 5; }, false, "slot 5"},
      {"crc", [](FrameHeader&) {}, true, "checksum"},
      {"oversized", [](FrameHeader& h) { h.length = kMaxFrame + 1; }, false, "exceeds the limit"},
      {"kind", [](FrameHeader& h) { h.kind = FrameKind::kStoreRequest; }, false, "kind 16"},
  };
  for (const BadFrameCase& c : cases) {
    SCOPED_TRACE(c.name);
    SetUp();
    auto right = make_right();
    GuardedBuffer buf(256);
    auto recv = right->post_recv(1, buf.span());
    FrameHeader h = peer_header(1, 256);
    c.corrupt(h);
    auto header = encode_frame_header(h);
    if (c.break_crc) header[20] ^= std::byte{4};
    raw_write(header);
    raw_write(pattern(256, 3));
    ASSERT_TRUE(drive([&] { return right->failed(); }));
    EXPECT_TRUE(FailedWith(*right, TM_ERROR_PROTOCOL, c.expected_text));
    EXPECT_EQ(right->test(recv), RequestState::kFailed);
    EXPECT_TRUE(buf.untouched());
  }
}

TEST_P(StreamLinkTest, LongerFrameThanPostedIsRejectedAndGuardStaysIntact) {
  auto right = make_right();
  GuardedBuffer buf(128);
  auto recv = right->post_recv(1, buf.span());
  raw_frame(peer_header(1, 128 + kGuardBytes), pattern(128 + kGuardBytes, 0));
  ASSERT_TRUE(drive([&] { return right->failed(); }));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PROTOCOL, "tag 0x1 of 4224 bytes", -1));
  EXPECT_EQ(right->test(recv), RequestState::kFailed);
  EXPECT_TRUE(buf.untouched());
}

TEST_P(StreamLinkTest, TruncatedHeaderThenCloseIsPeerFailure) {
  auto right = make_right();
  GuardedBuffer buf(16);
  auto recv = right->post_recv(1, buf.span());
  auto header = encode_frame_header(peer_header(1, 16));
  raw_write(std::span(header).first(20));
  close_raw_peer();
  ASSERT_TRUE(drive([&] { return right->failed(); }));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PEER_FAILED, "connection closed by slot 0"));
  EXPECT_EQ(right->test(recv), RequestState::kFailed);
  EXPECT_TRUE(buf.untouched());
}

TEST_P(StreamLinkTest, TruncatedPayloadThenCloseIsPeerFailure) {
  auto right = make_right();
  GuardedBuffer buf(1000);
  auto recv = right->post_recv(1, buf.span());
  raw_write(encode_frame_header(peer_header(1, 1000)));
  auto payload = pattern(1000, 9);
  raw_write(std::span(payload).first(300));
  close_raw_peer();
  ASSERT_TRUE(drive([&] { return right->failed(); }));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PEER_FAILED, "slot 0"));
  EXPECT_EQ(right->test(recv), RequestState::kFailed);
  EXPECT_TRUE(buf.guard_intact());
}

// A frame half on the wire when its operation is cancelled still arrives
// whole and with its real bytes (the receiver cannot tell a cut frame from a
// complete one), even if the caller reuses its buffer at once; and nothing
// posted after the cancel is sent.
TEST_P(StreamLinkTest, CancelMidFrameFinishesWithRealBytesAndSendsNothingMore) {
  auto left = make_left();
  auto right = make_right();
  const size_t big = 8 << 20;
  auto data = pattern(big, 5);
  auto first = left->post_send(1, data);
  // The socket takes only part of 8 MiB while nobody reads.
  for (int i = 0; i < 5; ++i) loop_->run_once(std::chrono::milliseconds(1)).message();
  ASSERT_EQ(left->test(first), RequestState::kPending);
  left->cancel_pending();
  EXPECT_EQ(left->test(first), RequestState::kFailed);
  EXPECT_EQ(left->pending_sends(), 1u);  // the frame being finished
  data.assign(big, std::byte{0xEE});     // the caller may reuse its buffer now
  auto next_data = pattern(333, 8);
  auto second = left->post_send(2, next_data);
  EXPECT_EQ(left->test(second), RequestState::kFailed);

  std::vector<std::byte> got(big, kGuard);
  auto recv1 = right->post_recv(1, got);
  ASSERT_TRUE(
      drive([&] { return right->failed() || right->test(recv1) != RequestState::kPending; }));
  ASSERT_FALSE(right->failed()) << right->status().message();
  EXPECT_EQ(right->test(recv1), RequestState::kDone);
  EXPECT_TRUE(got == pattern(big, 5));
  ASSERT_TRUE(drive([&] { return left->pending_sends() == 0; }));
  EXPECT_EQ(left->test(second), RequestState::kFailed);
}

TEST_P(StreamLinkTest, CancelledReceiveDiscardsIncomingDataButKeepsControlFlowing) {
  RecordingObserver observer;
  auto left = make_left();
  auto right = make_right(&observer);
  GuardedBuffer buf(64 << 10);
  auto recv = right->post_recv(1, buf.span());
  right->cancel_pending();
  EXPECT_EQ(right->test(recv), RequestState::kFailed);
  auto data = pattern(64 << 10, 2);
  auto send = left->post_send(1, data);
  ControlMessage hb;
  hb.kind = FrameKind::kHeartbeat;
  hb.ops_entered = 77;
  left->send_control(hb);
  ASSERT_TRUE(drive([&] { return right->failed() || !observer.controls.empty(); }));
  EXPECT_FALSE(right->failed()) << right->status().message();
  EXPECT_EQ(observer.controls[0].ops_entered, 77u);
  EXPECT_EQ(left->test(send), RequestState::kDone);
  EXPECT_TRUE(buf.untouched());
}

TEST_P(StreamLinkTest, CancelMidReceiveStopsWritingTheBuffer) {
  auto left = make_left();
  auto right = make_right();
  const size_t big = 4 << 20;
  auto data = pattern(big, 6);
  auto send = left->post_send(1, data);
  std::vector<std::byte> buf(big, kGuard);
  auto recv = right->post_recv(1, buf);
  // Let part of the payload land, then abandon the receive.
  ASSERT_TRUE(drive([&] { return buf[0] != kGuard || right->failed(); }));
  ASSERT_EQ(right->test(recv), RequestState::kPending);
  right->cancel_pending();
  EXPECT_EQ(right->test(recv), RequestState::kFailed);
  std::fill(buf.begin(), buf.end(), kGuard);
  ASSERT_TRUE(drive([&] { return left->test(send) != RequestState::kPending; }));
  EXPECT_EQ(left->test(send), RequestState::kDone);
  EXPECT_FALSE(right->failed()) << right->status().message();
  EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](std::byte b) { return b == kGuard; }));
}

TEST_P(StreamLinkTest, ManySmallFramesBatchedIntoOneSendArriveInOrder) {
  auto left = make_left();
  auto right = make_right();
  constexpr int kFrames = 200;  // several sendmsg() batches of up to 32 frames
  std::vector<std::vector<std::byte>> sent, got;
  std::vector<RequestHandle> sends, recvs;
  for (int i = 0; i < kFrames; ++i) {
    sent.push_back(pattern(static_cast<size_t>(i % 7) * 13, static_cast<uint8_t>(i)));
    got.emplace_back(sent.back().size(), kGuard);
  }
  for (int i = 0; i < kFrames; ++i)
    sends.push_back(left->post_send(static_cast<uint64_t>(i), sent[i]));
  for (int i = 0; i < kFrames; ++i)
    recvs.push_back(right->post_recv(static_cast<uint64_t>(i), got[i]));
  ASSERT_TRUE(drive(
      [&] { return right->failed() || right->test(recvs.back()) != RequestState::kPending; }));
  ASSERT_FALSE(right->failed()) << right->status().message();
  for (int i = 0; i < kFrames; ++i) {
    EXPECT_EQ(left->test(sends[i]), RequestState::kDone) << i;
    EXPECT_EQ(right->test(recvs[i]), RequestState::kDone) << i;
    EXPECT_EQ(got[i], sent[i]) << i;
  }
}

TEST_P(StreamLinkTest, TooManyOutstandingSendsFailTheLink) {
  StreamLink::Options o = options_for(0, 1);
  o.max_outstanding = 4;
  auto created = StreamLink::create(*loop_, make_stream(std::move(left_fd_)), o, nullptr);
  ASSERT_TRUE(created.ok());
  auto& link = *created.value();
  auto big = pattern(1 << 20, 1);  // fills the socket, so nothing completes
  for (int i = 0; i < 4; ++i) link.post_send(static_cast<uint64_t>(i), big);
  EXPECT_FALSE(link.failed()) << link.status().message();
  auto fifth = link.post_send(4, big);
  EXPECT_EQ(link.test(fifth), RequestState::kFailed);
  EXPECT_TRUE(FailedWith(link, TM_ERROR_INTERNAL, "overflow"));
}

TEST_P(StreamLinkTest, QueuedHeartbeatIsReplacedByTheNewerOne) {
  RecordingObserver observer;
  auto left = make_left();
  auto right = make_right(&observer);
  auto big = pattern(4 << 20, 2);
  auto send = left->post_send(1, big);  // a frame in progress holds control frames back
  ControlMessage hb;
  hb.kind = FrameKind::kHeartbeat;
  for (uint64_t ops = 1; ops <= 5; ++ops) {
    hb.ops_entered = ops;
    left->send_control(hb);
  }
  std::vector<std::byte> buf(big.size());
  right->post_recv(1, buf);
  ASSERT_TRUE(drive(
      [&] { return left->test(send) != RequestState::kPending && !observer.controls.empty(); }));
  for (int i = 0; i < 5; ++i) loop_->run_once(std::chrono::milliseconds(2)).message();
  ASSERT_EQ(observer.controls.size(), 1u);
  EXPECT_EQ(observer.controls[0].ops_entered, 5u);
  EXPECT_EQ(buf, big);
}

TEST_P(StreamLinkTest, GoodbyeThenCloseMeansPeerLeft) {
  RecordingObserver observer;
  auto left = make_left();
  auto right = make_right(&observer);
  auto data = pattern(1000, 4);
  left->post_send(3, data);
  left->close_gracefully();
  GuardedBuffer buf(1000);
  auto recv = right->post_recv(3, buf.span());
  ASSERT_TRUE(drive([&] { return right->peer_left() || right->failed(); }));
  EXPECT_TRUE(right->peer_left());
  EXPECT_EQ(right->test(recv), RequestState::kDone);  // data before the goodbye is delivered
  ASSERT_TRUE(drive([&] { return left->flushed(); }));
  ASSERT_EQ(observer.controls.size(), 1u);
  EXPECT_EQ(observer.controls[0].kind, FrameKind::kGoodbye);
  left.reset();  // closes the socket
  ASSERT_TRUE(drive([&] { return right->failed(); }));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PEER_FAILED, "left the communicator"));
}

TEST_P(StreamLinkTest, SendAfterCloseGracefullyFailsTheLink) {
  auto left = make_left();
  left->close_gracefully();
  auto data = pattern(8, 0);
  auto send = left->post_send(1, data);
  EXPECT_EQ(left->test(send), RequestState::kFailed);
  EXPECT_TRUE(FailedWith(*left, TM_ERROR_INTERNAL, "closing"));
}

TEST_P(StreamLinkTest, HeartbeatAndAbortReachTheObserver) {
  RecordingObserver observer;
  auto left = make_left();
  auto right = make_right(&observer);
  ControlMessage hb;
  hb.kind = FrameKind::kHeartbeat;
  hb.ops_entered = 12;
  hb.waiting_on = 0;
  left->send_control(hb);
  ControlMessage abort;
  abort.kind = FrameKind::kAbort;
  abort.failed_slot = 2;
  abort.code = TM_ERROR_TIMEOUT;
  abort.reason = "slot 2 stopped";
  left->send_control(abort);
  ASSERT_TRUE(drive([&] { return observer.controls.size() >= 2 || right->failed(); }));
  ASSERT_EQ(observer.controls.size(), 2u);
  EXPECT_EQ(observer.controls[0].kind, FrameKind::kHeartbeat);
  EXPECT_EQ(observer.controls[0].ops_entered, 12u);
  EXPECT_EQ(observer.controls[0].waiting_on, 0);
  EXPECT_EQ(observer.controls[1].kind, FrameKind::kAbort);
  EXPECT_EQ(observer.controls[1].failed_slot, 2);
  EXPECT_EQ(observer.controls[1].code, static_cast<uint32_t>(TM_ERROR_TIMEOUT));
  EXPECT_EQ(observer.controls[1].reason, "slot 2 stopped");
  EXPECT_FALSE(right->failed());
  EXPECT_FALSE(right->peer_left());
}

TEST_P(StreamLinkTest, MalformedControlPayloadFailsTheLink) {
  RecordingObserver observer;
  auto right = make_right(&observer);
  FrameHeader h = peer_header(0, 5);
  h.kind = FrameKind::kHeartbeat;
  raw_frame(h, pattern(5, 0));
  ASSERT_TRUE(drive([&] { return right->failed(); }));
  EXPECT_TRUE(FailedWith(*right, TM_ERROR_PROTOCOL, "heartbeat"));
  EXPECT_TRUE(observer.controls.empty());
  EXPECT_EQ(observer.failures, 1);
}

}  // namespace
}  // namespace trainmover::transport::tcp

namespace trainmover::transport::tcp {
namespace {

// ---- epochs: the fence of the two-phase switch ------------------------------

TEST_P(StreamLinkTest, OlderEpochDataIsDroppedNeverDelivered) {
  auto right = make_right();
  GuardedBuffer buf(256);
  auto recv = right->post_recv(1, buf.span());
  FrameHeader stale = peer_header(1, 256);
  stale.epoch = kEpoch - 1;
  raw_frame(stale, pattern(256, 1));
  auto fresh = pattern(256, 2);
  raw_frame(peer_header(1, 256), fresh);
  ASSERT_TRUE(drive([&] { return right->test(recv) != RequestState::kPending; }));
  EXPECT_EQ(right->test(recv), RequestState::kDone);
  EXPECT_FALSE(right->failed());
  EXPECT_TRUE(std::equal(fresh.begin(), fresh.end(), buf.span().begin()));
  EXPECT_TRUE(buf.guard_intact());
}

TEST_P(StreamLinkTest, NewerEpochDataWaitsForAdvanceEpoch) {
  auto right = make_right();
  GuardedBuffer early(128);
  auto recv = right->post_recv(1, early.span());
  FrameHeader next = peer_header(1, 128);
  next.epoch = kEpoch + 1;
  auto payload = pattern(128, 5);
  raw_frame(next, payload);
  settle();  // nothing must complete
  EXPECT_EQ(right->test(recv), RequestState::kPending);
  EXPECT_TRUE(early.untouched());
  right->advance_epoch(kEpoch + 1);
  right->resume();
  EXPECT_EQ(right->test(recv), RequestState::kFailed);  // it belonged to the old epoch
  GuardedBuffer buf(128);
  auto again = right->post_recv(1, buf.span());
  ASSERT_TRUE(drive([&] { return right->test(again) != RequestState::kPending; }));
  EXPECT_EQ(right->test(again), RequestState::kDone);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), buf.span().begin()));
  EXPECT_TRUE(early.untouched());
  EXPECT_EQ(right->epoch(), kEpoch + 1);
}

TEST_P(StreamLinkTest, CancelledLinkResynchronisesAtTheNextEpoch) {
  RecordingObserver left_events, right_events;
  auto left = make_left(&left_events);
  auto right = make_right(&right_events);
  // An operation is abandoned half-way: the left end sent, the right end
  // cancelled before receiving.
  auto old_data = pattern(64 << 10, 7);
  left->post_send(1, old_data);
  GuardedBuffer old_buf(64 << 10);
  right->post_recv(2, old_buf.span());  // a mismatching tag would fail; cancel first
  right->cancel_pending();
  left->cancel_pending();
  settle();
  // Both move to the next epoch and run a new operation on the same link.
  left->advance_epoch(kEpoch + 1);
  right->advance_epoch(kEpoch + 1);
  left->resume();
  right->resume();
  auto new_data = pattern(4096, 9);
  GuardedBuffer buf(4096);
  auto recv = right->post_recv(1, buf.span());
  auto send = left->post_send(1, new_data);
  ASSERT_TRUE(drive([&] {
    return right->test(recv) != RequestState::kPending &&
           left->test(send) != RequestState::kPending;
  }));
  EXPECT_EQ(right->test(recv), RequestState::kDone);
  EXPECT_EQ(left->test(send), RequestState::kDone);
  EXPECT_TRUE(std::equal(new_data.begin(), new_data.end(), buf.span().begin()));
  EXPECT_TRUE(old_buf.untouched());
  EXPECT_FALSE(left->failed());
  EXPECT_FALSE(right->failed());
}

TEST_P(StreamLinkTest, ControlMessagesCarryTheirEpoch) {
  RecordingObserver left_events, right_events;
  auto left = make_left(&left_events);
  auto right = make_right(&right_events);
  ControlMessage hb;
  hb.kind = FrameKind::kHeartbeat;
  left->send_control(hb);
  ASSERT_TRUE(drive([&] { return right_events.controls.size() == 1; }));
  left->advance_epoch(kEpoch + 2);
  left->send_control(hb);
  ASSERT_TRUE(drive([&] { return right_events.controls.size() == 2; }));
  EXPECT_EQ(right_events.controls[0].epoch, kEpoch);
  EXPECT_EQ(right_events.controls[1].epoch, kEpoch + 2);
}

INSTANTIATE_TEST_SUITE_P(Streams, StreamLinkTest, ::testing::Values("tcp", "shm"),
                         [](const ::testing::TestParamInfo<std::string>& kind) {
                           return kind.param;
                         });

}  // namespace
}  // namespace trainmover::transport::tcp
