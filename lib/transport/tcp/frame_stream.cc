#include "transport/tcp/frame_stream.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace trainmover::transport::tcp {
namespace {
// Returns bytes read, 0 when the socket would block; fails on EOF or error.
Result<size_t> recv_some(int fd, std::byte* dst, size_t len) {
  while (true) {
    ssize_t n = ::recv(fd, dst, len, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return error(TM_ERROR_PEER_FAILED, "connection closed by the peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return system_error("recv", errno);
  }
}
}  // namespace

Status FrameStream::read_available(const FrameHandler& on_frame) {
  while (true) {
    if (!in_payload_) {
      TM_ASSIGN_OR_RETURN(size_t n, recv_some(fd_, header_bytes_.data() + header_got_,
                                              kFrameHeaderSize - header_got_));
      if (n == 0) return Status::Ok();
      header_got_ += n;
      if (header_got_ < kFrameHeaderSize) continue;
      header_got_ = 0;
      TM_ASSIGN_OR_RETURN(header_, parse_frame_header(header_bytes_, limits_));
      payload_.assign(header_.length, std::byte{0});
      payload_got_ = 0;
      in_payload_ = true;
    }
    if (payload_got_ < payload_.size()) {
      TM_ASSIGN_OR_RETURN(
          size_t n, recv_some(fd_, payload_.data() + payload_got_, payload_.size() - payload_got_));
      if (n == 0) return Status::Ok();
      payload_got_ += n;
      if (payload_got_ < payload_.size()) continue;
    }
    in_payload_ = false;
    on_frame(header_, std::move(payload_));
    payload_.clear();
  }
}

void FrameStream::queue(const FrameHeader& header, std::vector<std::byte> payload) {
  FrameHeaderBytes h = encode_frame_header(header);
  std::vector<std::byte> frame(h.begin(), h.end());
  frame.insert(frame.end(), payload.begin(), payload.end());
  out_.push_back(std::move(frame));
}

Status FrameStream::write_available() {
  while (!out_.empty()) {
    const auto& frame = out_.front();
    ssize_t n = ::send(fd_, frame.data() + out_done_, frame.size() - out_done_,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
      return system_error("send", errno);
    }
    out_done_ += static_cast<size_t>(n);
    if (out_done_ == frame.size()) {
      out_.pop_front();
      out_done_ = 0;
    }
  }
  return Status::Ok();
}

}  // namespace trainmover::transport::tcp
