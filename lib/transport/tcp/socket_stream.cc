#include "transport/tcp/socket_stream.h"

#include <sys/socket.h>

#include <cerrno>

namespace trainmover::transport::tcp {

ssize_t SocketStream::read(std::byte* dst, size_t length) {
  while (true) {
    ssize_t n = ::recv(fd_.get(), dst, length, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
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
