// FrameStream: whole frames in and out of owned buffers, over a non-blocking
// socket. For low-rate request/response traffic (the rendezvous store); bulk
// data goes through StreamLink, which reads into posted buffers instead.
//
// Threading: one thread at a time. The fd is borrowed.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "common/status.h"
#include "transport/frame.h"

namespace trainmover::transport::tcp {

class FrameStream {
 public:
  using FrameHandler = std::function<void(const FrameHeader&, std::vector<std::byte>&&)>;

  FrameStream(int fd, const FrameLimits& limits) : fd_(fd), limits_(limits) {}

  // Reads until the socket would block, passing each complete frame to
  // `on_frame`. Fails on end of stream, a socket error or a bad frame.
  Status read_available(const FrameHandler& on_frame);
  // Queues a frame; call write_available() to send it.
  void queue(const FrameHeader& header, std::vector<std::byte> payload);
  // Writes until done or the socket would block.
  Status write_available();
  bool has_pending_writes() const { return !out_.empty(); }

 private:
  int fd_;
  FrameLimits limits_;
  FrameHeaderBytes header_bytes_{};
  size_t header_got_ = 0;
  bool in_payload_ = false;
  FrameHeader header_;
  std::vector<std::byte> payload_;
  size_t payload_got_ = 0;
  std::deque<std::vector<std::byte>> out_;
  size_t out_done_ = 0;
};

}  // namespace trainmover::transport::tcp
