// ControlStream: control frames (control_protocol.h) in and out of a
// non-blocking socket, for both ends of the control channel.
//
// A frame that does not parse is not fatal to the stream: its bytes were
// delimited by a valid header, so the stream hands the error to the owner
// (which answers it) and goes on with the next frame. A bad header is fatal:
// the frame boundaries are lost.
//
// Threading: one thread at a time. The fd is borrowed.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "common/status.h"
#include "control/control_protocol.h"

namespace trainmover::control {

class ControlStream {
 public:
  // Called for each complete frame: the message, or why it did not parse.
  using Handler = std::function<void(Result<Message>)>;

  explicit ControlStream(int fd) : fd_(fd) {}

  // Reads until the socket would block. Fails on end of stream, a socket
  // error or a bad frame header.
  Status read_available(const Handler& on_message);
  void queue(const Message& message);
  // Writes until done or the socket would block.
  Status write_available();
  bool has_pending_writes() const { return !out_.empty(); }
  // Bytes queued but not yet written, so an owner can bound a slow reader.
  size_t pending_bytes() const { return pending_bytes_; }

 private:
  // Hands every complete frame in in_[begin_, end_) to `on_message`.
  Status deliver_frames(const Handler& on_message);
  // Room after end_ for the rest of the frame that begins at begin_.
  void make_room();

  // Bytes read, not yet delivered: in_[begin_, end_). One recv takes every
  // frame that has arrived (a coordinator reads a burst of acks in one call
  // instead of two recvs per frame); a frame larger than the buffer grows it.
  static constexpr size_t kReadChunk = size_t{64} << 10;
  int fd_;
  std::vector<char> in_ = std::vector<char>(kReadChunk);
  size_t begin_ = 0;
  size_t end_ = 0;
  std::deque<std::vector<std::byte>> out_;
  size_t out_done_ = 0;
  size_t pending_bytes_ = 0;
};

}  // namespace trainmover::control
