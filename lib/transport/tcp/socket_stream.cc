#include "transport/tcp/socket_stream.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace trainmover::transport::tcp {

void SocketStream::on_wakeup(uint32_t events) {
  drained_ = false;
  trust_short_reads_ = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) == 0;
}

ssize_t SocketStream::receive(std::byte* dst, size_t length) {
  while (true) {
    ssize_t n = ::recv(fd_.get(), dst, length, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) drained_ = true;
    if (n > 0 && static_cast<size_t>(n) < length && trust_short_reads_) drained_ = true;
    return n;
  }
}

size_t SocketStream::take_buffered(std::byte* dst, size_t length) {
  size_t n = std::min(length, buffered_end_ - buffered_begin_);
  std::memcpy(dst, buffer_.get() + buffered_begin_, n);
  buffered_begin_ += n;
  return n;
}

void SocketStream::size_buffer_for_refill() {
  if (buffer_bytes_ >= refill_bytes_) return;
  buffer_ = std::make_unique_for_overwrite<std::byte[]>(refill_bytes_);
  buffer_bytes_ = refill_bytes_;
}

ssize_t SocketStream::read(std::byte* dst, size_t length) {
  const bool buffered = buffered_begin_ < buffered_end_;
  // A payload's first read finds the start of it buffered by the header's
  // read; the rest of a payload that did not fit finds the buffer empty and
  // says nothing about the next frame.
  if (length > kLargeRefillUpTo) refill_bytes_ = kSmallRefillBytes;
  if (length >= kDirectBytes && length <= kLargeRefillUpTo && buffered)
    refill_bytes_ = kLargeBufferBytes;
  if (buffered) return static_cast<ssize_t>(take_buffered(dst, length));
  if (drained_ && length > 0) {
    errno = EAGAIN;
    return -1;
  }
  if (length >= kDirectBytes || length == 0) return receive(dst, length);
  size_buffer_for_refill();
  ssize_t n = receive(buffer_.get(), refill_bytes_);
  if (n <= 0) return n;
  buffered_begin_ = 0;
  buffered_end_ = static_cast<size_t>(n);
  return static_cast<ssize_t>(take_buffered(dst, length));
}

ssize_t SocketStream::write(const iovec* iov, size_t count) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = count;
  while (true) {
    ssize_t n = sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

void SocketStream::shutdown_write() { ::shutdown(fd_.get(), SHUT_WR); }

// EPOLLOUT only while a frame waits for room: otherwise a loopback socket
// reports it at each ACK of our data, waking the loop owner for nothing once
// per message (docs/latency.md).
uint32_t SocketStream::interest(bool waiting_to_write) const {
  return EPOLLIN | EPOLLRDHUP | (waiting_to_write ? EPOLLOUT : 0u);
}

}  // namespace trainmover::transport::tcp
