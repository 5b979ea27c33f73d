// SocketStream: the ByteStream (transport/byte_stream.h) of a connected,
// non-blocking stream socket (TCP, or a Unix socket in tests).
//
// Small reads go through a 16 KiB buffer, so that a small frame (its
// header and payload) costs one recv(2) instead of three: the header, the
// payload, and the read that finds the socket empty, which an
// edge-triggered loop needs. A read that returns less than it asked for
// found the socket drained, so the next read answers EAGAIN without a
// system call until the next event on fd() (on_wakeup), which the kernel
// raises for any byte that arrives after that read. Except when the event
// said the peer hung up: its end of stream may wait behind the data, and no
// later event would announce it. Reads of 8 KiB or more go straight into
// the caller's memory.
#pragma once

#include <array>
#include <memory>

#include "common/unique_fd.h"
#include "transport/byte_stream.h"

namespace trainmover::transport::tcp {

class SocketStream final : public ByteStream {
 public:
  explicit SocketStream(UniqueFd fd) : fd_(std::move(fd)) {}

  int fd() const override { return fd_.get(); }
  void on_wakeup(uint32_t events) override;
  void look_again() override { drained_ = false; }
  ssize_t read(std::byte* dst, size_t length) override;
  ssize_t write(const iovec* iov, size_t count) override;
  void shutdown_write() override;
  uint32_t interest(bool waiting_to_write) const override;
  bool writable_on_input() const override { return false; }
  const char* kind() const override { return "TCP"; }

 private:
  static constexpr size_t kBufferBytes = size_t{16} << 10;
  static constexpr size_t kDirectBytes = size_t{8} << 10;

  // One recv(2) of up to `length` bytes; notes whether it drained the socket.
  ssize_t receive(std::byte* dst, size_t length);
  size_t take_buffered(std::byte* dst, size_t length);

  UniqueFd fd_;
  std::unique_ptr<std::array<std::byte, kBufferBytes>> buffer_;  // made at the first small read
  size_t buffered_begin_ = 0;
  size_t buffered_end_ = 0;
  bool drained_ = false;           // the last recv found no more bytes
  bool trust_short_reads_ = true;  // false once an event said the peer hung up
};

inline std::unique_ptr<ByteStream> socket_stream(UniqueFd fd) {
  return std::make_unique<SocketStream>(std::move(fd));
}

}  // namespace trainmover::transport::tcp
