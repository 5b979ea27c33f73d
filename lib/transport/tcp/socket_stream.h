// SocketStream: the ByteStream (transport/byte_stream.h) of a connected,
// non-blocking stream socket (TCP, or a Unix socket in tests).
#pragma once

#include <memory>

#include "common/unique_fd.h"
#include "transport/byte_stream.h"

namespace trainmover::transport::tcp {

class SocketStream final : public ByteStream {
 public:
  explicit SocketStream(UniqueFd fd) : fd_(std::move(fd)) {}

  int fd() const override { return fd_.get(); }
  ssize_t read(std::byte* dst, size_t length) override;
  ssize_t write(const iovec* iov, size_t count) override;
  void shutdown_write() override;
  uint32_t interest(bool waiting_to_write) const override;
  bool writable_on_input() const override { return false; }
  const char* kind() const override { return "TCP"; }

 private:
  UniqueFd fd_;
};

inline std::unique_ptr<ByteStream> socket_stream(UniqueFd fd) {
  return std::make_unique<SocketStream>(std::move(fd));
}

}  // namespace trainmover::transport::tcp
