// Tests of SocketStream's buffered reads (transport/tcp/socket_stream.h):
// what a drained socket answers before and after an event, the end of the
// stream behind the last bytes, and reads large enough to bypass the buffer.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>

#include "transport/tcp/socket_stream.h"

namespace trainmover::transport::tcp {
namespace {

class SocketStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    stream_ = std::make_unique<SocketStream>(UniqueFd(fds[0]));
    peer_ = UniqueFd(fds[1]);
  }
  void peer_writes(const std::string& text) {
    ASSERT_EQ(::send(peer_.get(), text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  std::string read(size_t length) {
    std::string out(length, '\0');
    ssize_t n = stream_->read(reinterpret_cast<std::byte*>(out.data()), length);
    if (n < 0) return errno == EAGAIN ? "<EAGAIN>" : "<error>";
    out.resize(static_cast<size_t>(n));
    return n == 0 ? "<end>" : out;
  }

  // Reads `length` bytes in as many parts as they come (an event before
  // each); `first_part` gets the size of the first.
  std::string read_whole(size_t length, size_t* first_part = nullptr) {
    std::string got;
    while (got.size() < length) {
      stream_->on_wakeup(EPOLLIN);
      std::string part = read(length - got.size());
      if (part == "<end>" || part == "<error>") return got + part;
      if (part == "<EAGAIN>") continue;
      if (got.empty() && first_part != nullptr) *first_part = part.size();
      got += part;
    }
    return got;
  }

  std::unique_ptr<SocketStream> stream_;
  UniqueFd peer_;
};

TEST_F(SocketStreamTest, SmallReadsComeFromOneReceiveUntilTheNextEvent) {
  peer_writes("headerPAYLOAD");
  stream_->on_wakeup(EPOLLIN);
  EXPECT_EQ(read(6), "header");
  EXPECT_EQ(read(7), "PAYLOAD");  // from the buffer
  peer_writes("late");
  // The receive found the socket drained: no system call until an event.
  EXPECT_EQ(read(4), "<EAGAIN>");
  stream_->on_wakeup(EPOLLIN);
  EXPECT_EQ(read(4), "late");
  EXPECT_EQ(read(4), "<EAGAIN>");
}

TEST_F(SocketStreamTest, LookAgainAsksTheSocketWithoutAnEvent) {
  peer_writes("a");
  stream_->on_wakeup(EPOLLIN);
  EXPECT_EQ(read(1), "a");
  EXPECT_EQ(read(1), "<EAGAIN>");
  peer_writes("b");
  stream_->look_again();
  EXPECT_EQ(read(1), "b");
}

TEST_F(SocketStreamTest, TheEndBehindTheLastBytesIsReadWhenTheEventSaidHangUp) {
  peer_writes("last words");
  peer_.reset();
  stream_->on_wakeup(EPOLLIN | EPOLLRDHUP);
  EXPECT_EQ(read(64), "last words");
  EXPECT_EQ(read(64), "<end>") << "the hang-up event came with the data: no later one will";
}

TEST_F(SocketStreamTest, LargeReadsGoStraightIntoTheCallersMemoryInOrder) {
  std::string big(100000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  std::thread writer([&] {
    size_t done = 0;
    while (done < big.size()) {
      ssize_t n = ::send(peer_.get(), big.data() + done, big.size() - done, MSG_NOSIGNAL);
      if (n > 0) done += static_cast<size_t>(n);
    }
  });
  std::string got;
  // Small and large reads in turn: a small one buffers ahead, and the large
  // one after it takes the buffered bytes first.
  const size_t wants[] = {5, 20000, 3, 70000};
  for (size_t i = 0; got.size() < big.size(); ++i) {
    stream_->on_wakeup(EPOLLIN);
    std::string part = read(std::min(wants[i % 4], big.size() - got.size()));
    if (part == "<EAGAIN>") continue;
    ASSERT_NE(part, "<end>");
    ASSERT_NE(part, "<error>");
    got += part;
  }
  writer.join();
  EXPECT_EQ(got, big);
}

// Frames of a 48-byte header and a 40000-byte payload, as a frame stream
// reads them. A fresh stream's buffer is 16 KiB (a link that carries only
// small frames, as one a switch has just opened, holds no more), so the
// first payload comes in two parts. It found its start buffered, so the
// buffer grows: the next header read buffers the whole frame, and the
// payload comes from the buffer without a second recv.
TEST_F(SocketStreamTest, AMidSizeFrameComesFromOneReceive) {
  const std::string header(48, 'h'), payload(40000, 'p');
  peer_writes(header + payload);
  stream_->on_wakeup(EPOLLIN);
  EXPECT_EQ(read(header.size()), header);
  size_t first_part = 0;
  EXPECT_EQ(read_whole(payload.size(), &first_part), payload);
  EXPECT_EQ(first_part, (size_t{16} << 10) - header.size()) << "a fresh stream buffers 16 KiB";
  for (int frame = 1; frame < 3; ++frame) {
    peer_writes(header + payload);
    stream_->on_wakeup(EPOLLIN);
    EXPECT_EQ(read(header.size()), header);
    EXPECT_EQ(read(payload.size()), payload) << "frame " << frame << ": in one part";
    EXPECT_EQ(read(header.size()), "<EAGAIN>") << "frame " << frame << ": the socket was drained";
  }
}

// Once a payload larger than the buffer came, a header read buffers only a
// little of the next frame: the rest goes straight into the caller's
// memory, not through a copy in the buffer. Mid-size frames after them are
// buffered whole again.
TEST_F(SocketStreamTest, AfterALargePayloadTheHeaderReadBuffersLittle) {
  const std::string header(48, 'h'), payload(80000, 'p');
  std::thread writer([&] {
    const std::string frames = header + payload + header + payload;
    size_t done = 0;
    while (done < frames.size()) {
      ssize_t n = ::send(peer_.get(), frames.data() + done, frames.size() - done, MSG_NOSIGNAL);
      if (n > 0) done += static_cast<size_t>(n);
    }
  });
  EXPECT_EQ(read_whole(header.size()), header);
  EXPECT_EQ(read_whole(payload.size()), payload);
  writer.join();  // the second frame is in the socket in full
  stream_->on_wakeup(EPOLLIN);
  EXPECT_EQ(read_whole(header.size()), header);
  size_t first_part = 0;
  EXPECT_EQ(read_whole(payload.size(), &first_part), payload);
  EXPECT_LE(first_part, size_t{16} << 10) << "the payload's first part came from the buffer";
  // Mid-size frames again: the first one's payload found its start buffered
  // and fit, so the next header read buffers the whole of the next frame.
  const std::string mid(40000, 'm');
  peer_writes(header + mid + header + mid);
  stream_->on_wakeup(EPOLLIN);
  EXPECT_EQ(read_whole(header.size()), header);
  EXPECT_EQ(read_whole(mid.size()), mid);
  EXPECT_EQ(read_whole(header.size()), header);
  EXPECT_EQ(read(mid.size()), mid) << "the second mid-size frame in one part";
}

}  // namespace
}  // namespace trainmover::transport::tcp
