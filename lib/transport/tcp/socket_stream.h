// SocketStream: the ByteStream (transport/byte_stream.h) of a connected,
// non-blocking stream socket (TCP, or a Unix socket in tests).
//
// Small reads go through a buffer, so that a frame (its header and
// payload) costs one recv(2) instead of three: the header, the payload, and
// the read that finds the socket empty, which an edge-triggered loop needs.
// The buffer starts at 16 KiB, made at the first small read. Once a payload
// of 8 to 64 KiB found its start buffered, the buffer grows to 68 KiB (at
// its next refill, when it is empty) and a refill asks for all of it, so
// that frames up to 64 KiB take one recv each; after a larger read a refill
// asks for 16 KiB only, and most of a large frame goes straight into the
// caller's memory without a copy through the buffer (docs/latency.md). A
// link that carries only small frames, such as a link a switch has just
// opened, never holds more than 16 KiB. A read that returns less than
// it asked for found the socket drained, so the next read answers EAGAIN
// without a system call until the next event on fd() (on_wakeup), which the
// kernel raises for any byte that arrives after that read. Except when the
// event said the peer hung up: its end of stream may wait behind the data,
// and no later event would announce it. Reads of 8 KiB or more that find
// the buffer empty go straight into the caller's memory.
#pragma once

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
  // A 64 KiB payload and its frame's header fit in the grown buffer.
  static constexpr size_t kLargeBufferBytes = size_t{68} << 10;
  static constexpr size_t kLargeRefillUpTo = size_t{64} << 10;
  static constexpr size_t kSmallRefillBytes = size_t{16} << 10;
  static constexpr size_t kDirectBytes = size_t{8} << 10;

  // One recv(2) of up to `length` bytes; notes whether it drained the socket.
  ssize_t receive(std::byte* dst, size_t length);
  size_t take_buffered(std::byte* dst, size_t length);
  // Makes the buffer refill_bytes_ long; called only while it is empty.
  void size_buffer_for_refill();

  UniqueFd fd_;
  std::unique_ptr<std::byte[]> buffer_;  // made at the first small read
  size_t buffer_bytes_ = 0;
  size_t buffered_begin_ = 0;
  size_t buffered_end_ = 0;
  size_t refill_bytes_ = kSmallRefillBytes;  // what a refill asks recv(2) for
  bool drained_ = false;                     // the last recv found no more bytes
  bool trust_short_reads_ = true;            // false once an event said the peer hung up
};

inline std::unique_ptr<ByteStream> socket_stream(UniqueFd fd) {
  return std::make_unique<SocketStream>(std::move(fd));
}

}  // namespace trainmover::transport::tcp
