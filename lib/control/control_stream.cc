#include "control/control_stream.h"

#include <sys/socket.h>

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
    if (!in_payload_) {
      TM_ASSIGN_OR_RETURN(
          size_t n, read_some(fd_, header_.data() + header_got_, header_.size() - header_got_));
      if (n == 0) return Status::Ok();
      header_got_ += n;
      if (header_got_ < header_.size()) continue;
      TM_ASSIGN_OR_RETURN(uint32_t length, parse_frame_header(header_));
      header_got_ = 0;
      in_payload_ = true;
      payload_.assign(length, '\0');
      payload_got_ = 0;
    }
    if (payload_got_ < payload_.size()) {
      TM_ASSIGN_OR_RETURN(
          size_t n, read_some(fd_, payload_.data() + payload_got_, payload_.size() - payload_got_));
      if (n == 0) return Status::Ok();
      payload_got_ += n;
      if (payload_got_ < payload_.size()) continue;
    }
    in_payload_ = false;
    on_message(parse_payload(payload_));
  }
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
