#include "transport/shm/ring_stream.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace trainmover::transport::shm {
namespace {
constexpr std::byte kRingByte{'R'};
constexpr std::byte kDoorbell{'D'};

// One byte and room for one descriptor, as sendmsg/recvmsg take them.
struct ByteWithDescriptor {
  std::byte byte{};
  iovec iov{};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
  msghdr msg{};

  ByteWithDescriptor() {
    iov = {&byte, 1};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
  }
  ByteWithDescriptor(const ByteWithDescriptor&) = delete;
  ByteWithDescriptor& operator=(const ByteWithDescriptor&) = delete;
};
}  // namespace

Result<std::unique_ptr<RingStream>> RingStream::create(UniqueFd socket, size_t ring_bytes,
                                                       RingPool* pool) {
  std::optional<SharedRing> spare = pool != nullptr ? pool->take(ring_bytes) : std::nullopt;
  if (!spare) {
    TM_ASSIGN_OR_RETURN(SharedRing made, SharedRing::create(ring_bytes));
    spare = std::move(made);
  }
  SharedRing out = std::move(*spare);
  ByteWithDescriptor m;
  m.byte = kRingByte;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&m.msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  int ring_fd = out.fd();
  std::memcpy(CMSG_DATA(cmsg), &ring_fd, sizeof ring_fd);
  // The socket is new and empty: one byte always fits. A peer that has
  // already closed it (it sent its part and left at once) reads nothing more
  // from us, but what it wrote before is still to be read: the stream is
  // made, with writes shut, as a TCP link would find it.
  bool peer_gone = false;
  while (sendmsg(socket.get(), &m.msg, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
    if (errno == EINTR) continue;
    if (errno != EPIPE && errno != ECONNRESET)
      return system_error("passing the shared-memory ring", errno);
    peer_gone = true;
    break;
  }
  out.close_fd();
  std::unique_ptr<RingStream> stream(new RingStream(std::move(socket), std::move(out)));
  stream->write_shut_ = peer_gone;
  return stream;
}

ssize_t RingStream::fail_with(const Status& status) {
  log(LogLevel::kWarn, "shared-memory link: ", status.message());
  error_ = EPROTO;
  return failed_call();
}

ssize_t RingStream::failed_call() const {
  errno = error_;
  return -1;
}

bool RingStream::receive_peer_ring() {
  ByteWithDescriptor m;
  ssize_t n;
  do {
    n = recvmsg(socket_.get(), &m.msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno != ECONNRESET) return false;
  if (n <= 0) {
    peer_closed_ = true;
    errno = 0;
    return false;
  }
  cmsghdr* cmsg = CMSG_FIRSTHDR(&m.msg);
  UniqueFd ring_fd;
  if (cmsg != nullptr && cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
      cmsg->cmsg_len == CMSG_LEN(sizeof(int))) {
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
    ring_fd.reset(fd);
  }
  if (m.byte != kRingByte || !ring_fd.valid() || (m.msg.msg_flags & MSG_CTRUNC) != 0) {
    fail_with(error(TM_ERROR_PROTOCOL, "the peer did not pass its ring first"));
    return false;
  }
  auto ring = SharedRing::attach(std::move(ring_fd));
  if (!ring.ok()) {
    fail_with(ring.status());
    return false;
  }
  in_.emplace(std::move(ring).value());
  return true;
}

// Bounded, so that a peer writing bytes without end cannot hold this thread
// (64 reads of 4 KiB are more than a Unix socket's default buffer holds; a
// peer's close comes with an event of its own).
bool RingStream::drain_doorbells() {
  constexpr int kMaxReads = 64;
  std::array<std::byte, 4096> bells;
  for (int reads = 0; reads < kMaxReads && !peer_closed_; ++reads) {
    ssize_t n = ::recv(socket_.get(), bells.data(), bells.size(), MSG_DONTWAIT);
    if (n > 0) continue;
    if (n == 0) {
      peer_closed_ = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    // A Unix socket closed with doorbells unread reports a reset: the peer
    // is gone all the same, and what it wrote is still in the ring.
    if (errno == ECONNRESET) {
      peer_closed_ = true;
      break;
    }
    return false;
  }
  return true;
}

// Best effort: a full socket already holds a doorbell the peer has not read,
// and a closed one is noticed by the reading side.
void RingStream::ring_doorbell() {
  std::byte bell = kDoorbell;
  ssize_t n;
  do {
    n = ::send(socket_.get(), &bell, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
}

// The peer's ring comes first, then doorbells; the link reads and writes
// after this, so a doorbell taken here is never lost for either direction.
void RingStream::on_wakeup(uint32_t /*events*/) {
  if (error_ != 0) return;
  if (!in_.has_value() && !receive_peer_ring()) {
    if (!peer_closed_ && errno != EAGAIN && errno != EWOULDBLOCK) error_ = errno;
    return;
  }
  if (!drain_doorbells()) error_ = errno;
}

bool RingStream::has_input() {
  if (error_ != 0) return false;
  bool moved = false;
  if (in_.has_value()) {
    uint64_t head = in_->head();
    moved = head != seen_head_;
    seen_head_ = head;
  }
  if (out_.writer_asleep()) {
    uint64_t tail = out_.tail();
    moved = moved || tail != seen_tail_;
    seen_tail_ = tail;
  }
  return moved;
}

bool RingStream::arm() {
  if (error_ != 0 || !in_.has_value()) return false;
  // Bytes the link has seen and left in the ring (a frame no receive is
  // posted for yet) do not count: they would keep the loop from ever
  // sleeping, and an idle rank would spin on a CPU its peers need.
  auto asleep = in_->sleep_reader(seen_head_);
  if (!asleep.ok()) return true;  // a bad position: let read() say so
  if (asleep.value()) return false;
  seen_head_ = in_->head();
  return true;
}

void RingStream::disarm() {
  if (in_.has_value()) in_->wake_reader_locally();
}

bool RingStream::peer_hung_up() const {
  pollfd p{socket_.get(), POLLOUT, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

ssize_t RingStream::read(std::byte* dst, size_t length) {
  if (error_ != 0) return failed_call();
  if (!in_.has_value()) {
    if (peer_closed_) return 0;
    errno = EAGAIN;
    return -1;
  }
  auto got = in_->consume(dst, length);
  if (!got.ok()) return fail_with(got.status());
  if (got.value() > 0) {
    if (in_->wake_writer()) ring_doorbell();
    return static_cast<ssize_t>(got.value());
  }
  // The peer wrote its last bytes before its socket closed: an empty ring
  // after the close is the end of the stream.
  if (peer_closed_) return 0;
  // Empty. The loop arms the ring before it sleeps (arm()).
  errno = EAGAIN;
  return -1;
}

ssize_t RingStream::write(const iovec* iov, size_t count) {
  if (error_ != 0) return failed_call();
  if (write_shut_) {
    errno = EPIPE;
    return -1;
  }
  while (true) {
    size_t n = out_.produce(iov, count);
    if (n > 0) {
      if (out_.wake_reader()) ring_doorbell();
      return static_cast<ssize_t>(n);
    }
    size_t wanted = 0;
    for (size_t i = 0; i < count; ++i) wanted += iov[i].iov_len;
    if (wanted == 0) return 0;
    // Full. A peer that is gone will never make room (TCP says EPIPE too).
    if (peer_closed_ && peer_hung_up()) {
      errno = EPIPE;
      return -1;
    }
    if (out_.sleep_writer()) {
      errno = EAGAIN;
      return -1;
    }
  }
}

void RingStream::shutdown_write() {
  write_shut_ = true;
  ::shutdown(socket_.get(), SHUT_WR);
}

}  // namespace trainmover::transport::shm
