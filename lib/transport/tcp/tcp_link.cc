#include "transport/tcp/tcp_link.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "common/log.h"

namespace trainmover::transport::tcp {
namespace {
constexpr size_t kMaxIov = 64;
constexpr size_t kControlQueueCapacity = 8;
}  // namespace

Result<std::unique_ptr<TcpLink>> TcpLink::create(EventLoop& loop, UniqueFd fd,
                                                 const Options& options, LinkObserver* observer) {
  std::unique_ptr<TcpLink> link(new TcpLink(loop, std::move(fd), options, observer));
  TM_RETURN_IF_ERROR(loop.add(link->fd_.get(), EPOLLIN | EPOLLRDHUP, link.get()));
  link->registered_ = true;
  return link;
}

TcpLink::TcpLink(EventLoop& loop, UniqueFd fd, const Options& options, LinkObserver* observer)
    : loop_(loop),
      fd_(std::move(fd)),
      options_(options),
      observer_(observer),
      epoch_(options.epoch),
      sends_(options.max_outstanding),
      controls_(kControlQueueCapacity),
      recvs_(options.max_outstanding) {}

TcpLink::~TcpLink() {
  if (registered_) loop_.remove(fd_.get(), this);
}

FrameHeader TcpLink::make_header(FrameKind kind, uint64_t tag, uint64_t length) const {
  FrameHeader h;
  h.kind = kind;
  h.job_id = options_.job_id;
  h.epoch = epoch_;
  h.tag = tag;
  h.length = length;
  h.src_slot = options_.local_slot;
  return h;
}

namespace {
// Sends what the socket takes; returns bytes sent, 0 on EAGAIN, -1 on error.
ssize_t send_iov(int fd, iovec* iov, size_t count) {
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = count;
  while (true) {
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return -1;
  }
}

// Appends the unwritten part of header+payload to iov.
size_t add_frame_iov(iovec* iov, const std::byte* header, const std::byte* payload,
                     size_t payload_len, size_t written) {
  size_t n = 0;
  if (written < kFrameHeaderSize) {
    iov[n++] = {const_cast<std::byte*>(header + written), kFrameHeaderSize - written};
    written = kFrameHeaderSize;
  }
  size_t payload_done = written - kFrameHeaderSize;
  if (payload_done < payload_len) {
    iov[n++] = {const_cast<std::byte*>(payload + payload_done), payload_len - payload_done};
  }
  return n;
}
}  // namespace

void TcpLink::fail(Status status, bool blame_peer) {
  if (failed()) return;
  status_ = Status(status.code(), status.message(), blame_peer ? options_.peer_slot : -1);
  if (registered_) {
    loop_.remove(fd_.get(), this);
    registered_ = false;
  }
  log(LogLevel::kDebug, "link to ", options_.peer_name, " failed: ", status_.message());
  if (status_.code() == TM_ERROR_PROTOCOL) send_parting_abort();
  if (observer_ != nullptr) observer_->on_link_failed(*this);
}

// The connection itself is fine after a protocol error: tell the peer why we
// drop it, so it reports the mismatch instead of a closed connection. Best
// effort: one non-blocking write, and only at a frame boundary.
void TcpLink::send_parting_abort() {
  bool mid_frame = (!sends_.empty() && sends_.front().written > 0) ||
                   (!controls_.empty() && controls_.front().written > 0);
  if (mid_frame) return;
  ControlMessage abort;
  abort.kind = FrameKind::kAbort;
  abort.failed_slot = -1;  // a mismatch: neither side alone is at fault
  abort.code = static_cast<uint32_t>(TM_ERROR_PROTOCOL);
  abort.reason = str_cat("slot ", options_.local_slot, " dropped its link: ", status_.message());
  ControlPayload payload;
  size_t length = encode_control_payload(abort, payload);
  FrameHeaderBytes header = encode_frame_header(make_header(FrameKind::kAbort, 0, length));
  std::array<iovec, 2> iov{{{header.data(), header.size()}, {payload.data(), length}}};
  [[maybe_unused]] ssize_t n = send_iov(fd_.get(), iov.data(), iov.size());
}

// The peer reads no more (it closed, or crashed). What it wrote before may
// still wait in our socket ahead of its goodbye: a peer that left right
// after its part of an operation sent data that a receive here has not
// taken yet. Unless a message of ours is lost with the connection, the link
// stays up for reading and fails where the stream ends, as a reader sees it.
void TcpLink::on_send_failed(int errno_value) {
  if (!sends_.empty() || salvaging_) return fail_io("send", errno_value);
  writes_closed_ = true;
  write_errno_ = errno_value;
  controls_.clear();
  if (closing_) flushed_ = true;  // nobody is left to write the goodbye to
  log(LogLevel::kDebug, "link to ", options_.peer_name, ": ",
      system_error("send", errno_value).message(), "; reading what it sent before");
  read_some();
}

void TcpLink::fail_io(const char* call, int errno_value) {
  salvage_control_frames();
  fail(Status(TM_ERROR_PEER_FAILED, str_cat("connection to ", options_.peer_name, " broken: ",
                                            system_error(call, errno_value).message())));
}

// A peer that failed sends an abort saying why and then closes; its close
// can reach us (as a reset on our next send) before we read the abort. Read
// what is still queued, dropping data, so the abort's cause is not lost.
void TcpLink::salvage_control_frames() {
  if (salvaging_ || failed()) return;
  salvaging_ = true;
  cancel_receives();
  read_some();
  salvaging_ = false;
}

RequestHandle TcpLink::post_send(uint64_t tag, std::span<const std::byte> data) {
  RequestHandle handle{sends_posted_++, true};
  if (failed() || detached_) return handle;  // tests as kFailed
  if (closing_) {
    fail(error(TM_ERROR_INTERNAL, "send posted on a closing link"));
    return handle;
  }
  if (writes_closed_) {  // the peer reads no more: this message cannot arrive
    fail_io("send", write_errno_);
    return handle;
  }
  if (data.size() > options_.max_frame_bytes) {
    fail(error(TM_ERROR_INVALID_ARGUMENT, "message of ", data.size(),
               " bytes exceeds the frame limit"));
    return handle;
  }
  SendEntry entry;
  entry.header = encode_frame_header(make_header(FrameKind::kData, tag, data.size()));
  entry.data = data.data();
  entry.length = data.size();
  if (!sends_.push(entry)) {
    fail(error(TM_ERROR_INTERNAL, "send queue overflow (", sends_.capacity(), " outstanding)"));
    return handle;
  }
  write_some();
  return handle;
}

RequestHandle TcpLink::post_recv(uint64_t tag, std::span<std::byte> data) {
  RequestHandle handle{recvs_posted_++, false};
  if (failed() || detached_) return handle;  // tests as kFailed
  if (!recvs_.push(RecvEntry{tag, data.data(), data.size()})) {
    fail(error(TM_ERROR_INTERNAL, "receive queue overflow (", recvs_.capacity(), " outstanding)"));
    return handle;
  }
  if (read_state_ == ReadState::kHeld) read_some();
  return handle;
}

RequestState TcpLink::test(RequestHandle request) const {
  uint64_t cancelled_from = request.is_send ? sends_cancelled_from_ : recvs_cancelled_from_;
  uint64_t cancelled_until = request.is_send ? sends_cancelled_until_ : recvs_cancelled_until_;
  if (request.seq >= cancelled_from && request.seq < cancelled_until) return RequestState::kFailed;
  uint64_t done = request.is_send ? sends_done_ : recvs_done_;
  if (request.seq < done) return RequestState::kDone;
  return failed() ? RequestState::kFailed : RequestState::kPending;
}

void TcpLink::cancel_pending() {
  if (detached_) return;
  detached_ = true;
  sends_cancelled_from_ = sends_done_;
  sends_cancelled_until_ = kNotCancelled;
  if (!sends_.empty() && sends_.front().written > 0) {
    // The frame is on the wire already and the peer will take it as complete:
    // finish it with its real bytes, copied out of the caller's buffer.
    SendEntry head = sends_.front();
    size_t payload_done = head.written > kFrameHeaderSize ? head.written - kFrameHeaderSize : 0;
    rescue_.assign(head.data + payload_done, head.data + head.length);
    rescue_base_ = payload_done;
    head.rescued = true;
    head.data = nullptr;
    sends_.clear();
    sends_.push(head);
  } else {
    sends_.clear();
  }
  cancel_receives();
  if (!failed()) {
    read_some();
    write_some();
  }
}

void TcpLink::advance_epoch(uint64_t epoch) {
  if (epoch <= epoch_ || failed()) return;
  // Requests cannot straddle epochs. A switch happens between operations,
  // so normally nothing is posted (or cancel_pending() already ran).
  if (!detached_ && (!sends_.empty() || !recvs_.empty())) cancel_pending();
  epoch_ = epoch;
  // Reattach: what was posted so far stays cancelled; numbering goes on.
  sends_cancelled_until_ = sends_posted_;
  recvs_cancelled_until_ = recvs_posted_;
  sends_done_ = sends_posted_;  // a rescued frame still queued is not counted
  recvs_done_ = recvs_posted_;
  detached_ = false;
  discarding_ = false;
}

void TcpLink::resume() {
  if (failed()) return;
  read_some();
  if (!failed()) write_some();
}

void TcpLink::cancel_receives() {
  if (recvs_cancelled_until_ != kNotCancelled) {
    recvs_cancelled_from_ = recvs_done_;
    recvs_cancelled_until_ = kNotCancelled;
  } else {
    recvs_cancelled_from_ = std::min(recvs_cancelled_from_, recvs_done_);
  }
  recvs_.clear();
  discarding_ = true;
  if (read_state_ == ReadState::kPayload) {
    discard_left_ = frame_.length - payload_got_;
    read_state_ = ReadState::kDiscard;
  } else if (read_state_ == ReadState::kHeld && frame_.epoch <= epoch_) {
    discard_frame(frame_.length);  // a newer epoch's frame stays held
  }
}

void TcpLink::send_control(const ControlMessage& message) {
  if (failed() || goodbye_queued_ || writes_closed_) return;
  if (enqueue_control(message)) write_some();
}

bool TcpLink::enqueue_control(const ControlMessage& message) {
  ControlEntry* slot = nullptr;
  // A heartbeat that has not started going out is replaced, not queued again.
  if (message.kind == FrameKind::kHeartbeat && !controls_.empty() &&
      controls_.back().kind == FrameKind::kHeartbeat && controls_.back().written == 0) {
    slot = &controls_.back();
  } else {
    if (!controls_.push(ControlEntry{})) return false;  // queue full of unsent control: drop
    slot = &controls_.back();
  }
  slot->kind = message.kind;
  slot->length = encode_control_payload(message, slot->payload);
  slot->header = encode_frame_header(make_header(message.kind, 0, slot->length));
  slot->written = 0;
  return true;
}

void TcpLink::close_gracefully() {
  closing_ = true;
  if (writes_closed_) flushed_ = true;
  if (!failed()) write_some();
}

bool TcpLink::maybe_send_goodbye() {
  if (!closing_ || goodbye_queued_ || failed() || !sends_.empty()) return false;
  ControlMessage goodbye;
  goodbye.kind = FrameKind::kGoodbye;
  goodbye_queued_ = enqueue_control(goodbye);
  return goodbye_queued_;
}

void TcpLink::on_events(uint32_t events) {
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) read_some();
  if (!failed() && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) write_some();
}

// ---- writing ---------------------------------------------------------------

void TcpLink::write_some() {
  write_what_fits();
  if (failed()) return;
  watch_writable(!writes_closed_ && (!sends_.empty() || !controls_.empty()));
}

// EPOLLOUT is asked for only while a frame waits for room in the socket:
// otherwise a loopback socket reports it at each ACK of our data, waking the
// loop owner for nothing once per message (docs/latency.md). Turning it on
// when the socket has room already reports it at once: no wake-up is lost.
void TcpLink::watch_writable(bool want) {
  if (want == watching_writable_ || !registered_) return;
  Status st = loop_.modify(fd_.get(), EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u), this);
  if (!st.ok()) return fail(st, false);
  watching_writable_ = want;
}

void TcpLink::write_what_fits() {
  while (!failed() && !writes_closed_) {
    bool data_in_progress = !sends_.empty() && sends_.front().written > 0;
    bool progressed = false;
    if (!controls_.empty() && !data_in_progress) {
      progressed = write_control();
    } else if (!sends_.empty() && sends_.front().rescued) {
      progressed = write_rescued();
    } else {
      progressed = write_data();
    }
    // Once the data is out, the goodbye (if closing) goes last.
    if (!progressed && !maybe_send_goodbye()) break;
  }
  if (failed() || writes_closed_) return;
  if (goodbye_queued_ && controls_.empty() && !flushed_) {
    shutdown(fd_.get(), SHUT_WR);
    flushed_ = true;
  }
}

bool TcpLink::write_control() {
  ControlEntry& c = controls_.front();
  std::array<iovec, 2> iov;
  size_t count = add_frame_iov(iov.data(), c.header.data(), c.payload.data(), c.length, c.written);
  ssize_t n = send_iov(fd_.get(), iov.data(), count);
  if (n < 0) {
    on_send_failed(errno);
    return false;
  }
  c.written += static_cast<size_t>(n);
  if (c.written == kFrameHeaderSize + c.length) controls_.pop();
  return n > 0;
}

bool TcpLink::write_data() {
  if (sends_.empty()) return false;
  std::array<iovec, kMaxIov> iov;
  size_t count = 0;
  for (size_t i = 0; i < sends_.size() && count + 2 <= kMaxIov; ++i) {
    SendEntry& e = sends_.at(i);
    count += add_frame_iov(iov.data() + count, e.header.data(), e.data, e.length, e.written);
  }
  ssize_t n = send_iov(fd_.get(), iov.data(), count);
  if (n < 0) {
    on_send_failed(errno);
    return false;
  }
  size_t left = static_cast<size_t>(n);
  while (left > 0) {
    SendEntry& e = sends_.front();
    size_t take = std::min(left, kFrameHeaderSize + e.length - e.written);
    e.written += take;
    left -= take;
    if (e.written == kFrameHeaderSize + e.length) {
      sends_.pop();
      ++sends_done_;
    }
  }
  return n > 0;
}

bool TcpLink::write_rescued() {
  SendEntry& e = sends_.front();
  std::array<iovec, 2> iov;
  size_t count = 0;
  if (e.written < kFrameHeaderSize) {
    iov[count++] = {e.header.data() + e.written, kFrameHeaderSize - e.written};
  }
  size_t payload_done = std::max(e.written, kFrameHeaderSize) - kFrameHeaderSize;
  if (payload_done < e.length) {
    iov[count++] = {rescue_.data() + (payload_done - rescue_base_), e.length - payload_done};
  }
  ssize_t n = send_iov(fd_.get(), iov.data(), count);
  if (n < 0) {
    fail_io("send", errno);
    return false;
  }
  e.written += static_cast<size_t>(n);
  if (e.written == kFrameHeaderSize + e.length) {
    sends_.pop();  // counted as cancelled already
    rescue_ = {};  // give the copy back
  }
  return n > 0;
}

// ---- reading ---------------------------------------------------------------

ssize_t TcpLink::read_into(std::byte* dst, size_t len) {
  while (true) {
    ssize_t n = ::recv(fd_.get(), dst, len, MSG_DONTWAIT);
    if (n > 0) return n;
    if (n == 0) {
      if (peer_left_) {
        fail(Status(TM_ERROR_PEER_FAILED, str_cat(options_.peer_name, " left the communicator")));
      } else {
        fail(Status(TM_ERROR_PEER_FAILED, str_cat("connection closed by ", options_.peer_name,
                                                  " (process exited or crashed)")));
      }
      return -1;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    if (peer_left_) {  // a reset after its goodbye: our last heartbeat reached a closed socket
      fail(Status(TM_ERROR_PEER_FAILED, str_cat(options_.peer_name, " left the communicator")));
    } else {
      fail_io("recv", errno);
    }
    return -1;
  }
}

void TcpLink::read_some() {
  bool more = true;
  while (more && !failed()) {
    switch (read_state_) {
      case ReadState::kHeader:
        more = read_header();
        break;
      case ReadState::kHeld:
        more = match_held_frame();
        break;
      case ReadState::kPayload:
        more = read_payload();
        break;
      case ReadState::kControlPayload:
        more = read_control_payload();
        break;
      case ReadState::kDiscard:
        more = discard_payload();
        break;
    }
  }
}

bool TcpLink::read_header() {
  ssize_t n = read_into(header_bytes_.data() + header_got_, kFrameHeaderSize - header_got_);
  if (n <= 0) return false;
  header_got_ += static_cast<size_t>(n);
  if (header_got_ < kFrameHeaderSize) return true;
  header_got_ = 0;
  FrameLimits limits;
  limits.job_id = options_.job_id;
  limits.peer_slot = options_.peer_slot;
  limits.max_data_length = options_.max_frame_bytes;
  auto header = parse_frame_header(header_bytes_, limits);
  if (!header.ok()) {
    fail(Status(TM_ERROR_PROTOCOL,
                str_cat("bad frame from ", options_.peer_name, ": ", header.status().message())));
    return false;
  }
  on_header(header.value());
  return true;
}

void TcpLink::on_header(const FrameHeader& header) {
  frame_ = header;
  payload_got_ = 0;
  bool stale = header.epoch < epoch_ || (discarding_ && header.epoch == epoch_);
  if (header.kind == FrameKind::kData && stale) {
    discard_frame(header.length);
  } else if (header.kind == FrameKind::kData) {
    read_state_ = ReadState::kHeld;
  } else if (header.length > 0) {
    read_state_ = ReadState::kControlPayload;
  } else {
    on_control_frame();
  }
}

void TcpLink::discard_frame(uint64_t payload_left) {
  discard_left_ = payload_left;
  read_state_ = ReadState::kDiscard;
}

// A data frame's header has been read: match it with the oldest posted receive.
bool TcpLink::match_held_frame() {
  if (frame_.epoch < epoch_) {  // held across a switch: the fence drops it
    discard_frame(frame_.length);
    return true;
  }
  // A newer epoch's frame waits for advance_epoch(), as for a receive.
  if (frame_.epoch > epoch_ || recvs_.empty()) return false;
  const RecvEntry& r = recvs_.front();
  if (frame_.tag != r.tag || frame_.length != r.length) {
    fail(Status(TM_ERROR_PROTOCOL,
                str_cat(options_.peer_name, " sent a message with tag 0x", std::hex, frame_.tag,
                        std::dec, " of ", frame_.length, " bytes where tag 0x", std::hex, r.tag,
                        std::dec, " of ", r.length,
                        " bytes was expected (the slots issued different operations or counts)")),
         false);  // neither side alone is at fault: every slot reports failed slot -1
    return false;
  }
  read_state_ = ReadState::kPayload;
  return true;
}

bool TcpLink::read_payload() {
  RecvEntry& r = recvs_.front();
  if (payload_got_ < r.length) {
    ssize_t n = read_into(r.data + payload_got_, r.length - payload_got_);
    if (n <= 0) return false;
    payload_got_ += static_cast<size_t>(n);
    if (payload_got_ < r.length) return true;
  }
  recvs_.pop();
  ++recvs_done_;
  read_state_ = ReadState::kHeader;
  return true;
}

bool TcpLink::discard_payload() {
  while (discard_left_ > 0) {
    ssize_t n =
        read_into(control_in_.data(), std::min<uint64_t>(discard_left_, control_in_.size()));
    if (n <= 0) return false;
    discard_left_ -= static_cast<uint64_t>(n);
  }
  read_state_ = ReadState::kHeader;
  return true;
}

bool TcpLink::read_control_payload() {
  ssize_t n = read_into(control_in_.data() + payload_got_, frame_.length - payload_got_);
  if (n <= 0) return false;
  payload_got_ += static_cast<size_t>(n);
  if (payload_got_ == frame_.length) on_control_frame();
  return true;
}

void TcpLink::on_control_frame() {
  read_state_ = ReadState::kHeader;
  auto message = parse_control_payload(
      frame_.kind, std::span<const std::byte>(control_in_.data(), frame_.length));
  if (!message.ok()) {
    fail(Status(TM_ERROR_PROTOCOL, str_cat("bad control frame from ", options_.peer_name, ": ",
                                           message.status().message())));
    return;
  }
  if (frame_.kind == FrameKind::kGoodbye) peer_left_ = true;
  message.value().epoch = frame_.epoch;
  if (observer_ != nullptr) observer_->on_control(*this, message.value());
}

}  // namespace trainmover::transport::tcp
