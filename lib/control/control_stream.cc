#include "control/control_stream.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace trainmover::control {

namespace {
// Reads what is there into `into`; returns bytes read, 0 when it would block.
Result<size_t> read_some(int fd, void* into, size_t length) {
  while (true) {
    ssize_t n = ::recv(fd, into, length, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return error(TM_ERROR_PEER_FAILED, "the peer closed the control connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return system_error("recv on the control connection", errno);
  }
}
}  // namespace

Status ControlStream::read_available(const Handler& on_message) {
  while (true) {
    make_room();
    TM_ASSIGN_OR_RETURN(size_t n, read_some(fd_, in_.data() + end_, in_.size() - end_));
    if (n == 0) return Status::Ok();
    end_ += n;
    TM_RETURN_IF_ERROR(deliver_frames(on_message));
  }
}

Status ControlStream::deliver_frames(const Handler& on_message) {
  while (end_ - begin_ >= kControlHeaderSize) {
    const auto* header = reinterpret_cast<const std::byte*>(in_.data() + begin_);
    TM_ASSIGN_OR_RETURN(uint32_t length, parse_frame_header(std::span(header, kControlHeaderSize)));
    if (end_ - begin_ < kControlHeaderSize + length) break;
    const std::string_view payload(in_.data() + begin_ + kControlHeaderSize, length);
    begin_ += kControlHeaderSize + length;
    on_message(parse_payload(payload));
  }
  if (begin_ == end_) begin_ = end_ = 0;
  return Status::Ok();
}

void ControlStream::make_room() {
  size_t need = kControlHeaderSize;  // at least the next header
  if (end_ - begin_ >= kControlHeaderSize) {
    const auto* header = reinterpret_cast<const std::byte*>(in_.data() + begin_);
    // A bad header fails in deliver_frames before it gets here.
    auto length = parse_frame_header(std::span(header, kControlHeaderSize));
    if (length.ok()) need += length.value();
  }
  if (in_.size() - begin_ >= need && end_ < in_.size()) return;
  std::copy(in_.begin() + static_cast<ptrdiff_t>(begin_),
            in_.begin() + static_cast<ptrdiff_t>(end_), in_.begin());
  end_ -= begin_;
  begin_ = 0;
  if (in_.size() < need) in_.resize(need);
}

void ControlStream::queue(const Message& message) {
  out_.push_back(encode_frame(message));
  pending_bytes_ += out_.back().size();
}

Status ControlStream::write_available() {
  while (!out_.empty()) {
    const auto& front = out_.front();
    ssize_t n = ::send(fd_, front.data() + out_done_, front.size() - out_done_,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
      return system_error("send on the control connection", errno);
    }
    out_done_ += static_cast<size_t>(n);
    pending_bytes_ -= static_cast<size_t>(n);
    if (out_done_ == front.size()) {
      out_.pop_front();
      out_done_ = 0;
    }
  }
  return Status::Ok();
}

}  // namespace trainmover::control
