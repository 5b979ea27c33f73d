#include "transport/stream_link.h"

#include <algorithm>
#include <array>
#include <cerrno>

#include "common/log.h"

namespace trainmover::transport {
namespace {
constexpr size_t kMaxIov = 64;
constexpr size_t kControlQueueCapacity = 8;
}  // namespace

Result<std::unique_ptr<StreamLink>> StreamLink::create(EventLoop& loop,
                                                       std::unique_ptr<ByteStream> stream,
                                                       const Options& options,
                                                       LinkObserver* observer) {
  std::unique_ptr<StreamLink> link(new StreamLink(loop, std::move(stream), options, observer));
  link->interest_ = link->stream_->interest(false);
  TM_RETURN_IF_ERROR(loop.add(link->stream_->fd(), link->interest_, link.get()));
  if (link->stream_->pollable()) loop.add_polled(link.get());
  link->registered_ = true;
  return link;
}

StreamLink::StreamLink(EventLoop& loop, std::unique_ptr<ByteStream> stream, const Options& options,
                       LinkObserver* observer)
    : loop_(loop),
      stream_(std::move(stream)),
      options_(options),
      observer_(observer),
      epoch_(options.epoch),
      sends_(options.max_outstanding),
      controls_(kControlQueueCapacity),
      recvs_(options.max_outstanding) {}

StreamLink::~StreamLink() {
  if (registered_) loop_.remove(stream_->fd(), this);
}

ssize_t StreamLink::send_iov(const iovec* iov, size_t count) {
  ssize_t n = stream_->write(iov, count);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  return n;
}

FrameHeader StreamLink::make_header(FrameKind kind, uint64_t tag, uint64_t length) const {
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

void StreamLink::fail(Status status, bool blame_peer) {
  if (failed()) return;
  status_ = Status(status.code(), status.message(), blame_peer ? options_.peer_slot : -1);
  if (registered_) {
    loop_.remove(stream_->fd(), this);
    registered_ = false;
  }
  log(LogLevel::kDebug, "link to ", options_.peer_name, " failed: ", status_.message());
  if (status_.code() == TM_ERROR_PROTOCOL) send_parting_abort();
  if (observer_ != nullptr) observer_->on_link_failed(*this);
}

// The connection itself is fine after a protocol error: tell the peer why we
// drop it, so it reports the mismatch instead of a closed connection. Best
// effort: one non-blocking write, and only at a frame boundary.
void StreamLink::send_parting_abort() {
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
  [[maybe_unused]] ssize_t n = send_iov(iov.data(), iov.size());
}

// The peer reads no more (it closed, or crashed). What it wrote before may
// still wait in our socket ahead of its goodbye: a peer that left right
// after its part of an operation sent data that a receive here has not
// taken yet. Unless a message of ours is lost with the connection, the link
// stays up for reading and fails where the stream ends, as a reader sees it.
void StreamLink::on_send_failed(int errno_value) {
  if (!sends_.empty() || salvaging_) return fail_io("send", errno_value);
  writes_closed_ = true;
  write_errno_ = errno_value;
  controls_.clear();
  if (closing_) flushed_ = true;  // nobody is left to write the goodbye to
  log(LogLevel::kDebug, "link to ", options_.peer_name, ": ",
      system_error("send", errno_value).message(), "; reading what it sent before");
  stream_->look_again();
  read_some();
}

void StreamLink::fail_io(const char* call, int errno_value) {
  salvage_control_frames();
  fail(Status(TM_ERROR_PEER_FAILED, str_cat("connection to ", options_.peer_name, " broken: ",
                                            system_error(call, errno_value).message())));
}

// A peer that failed sends an abort saying why and then closes; its close
// can reach us (as a reset on our next send) before we read the abort. Read
// what is still queued, dropping data, so the abort's cause is not lost.
void StreamLink::salvage_control_frames() {
  if (salvaging_ || failed()) return;
  salvaging_ = true;
  cancel_receives();
  stream_->look_again();
  read_some();
  salvaging_ = false;
}

RequestHandle StreamLink::post_send(uint64_t tag, std::span<const std::byte> data) {
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

RequestHandle StreamLink::post_recv(uint64_t tag, std::span<std::byte> data) {
  RequestHandle handle{recvs_posted_++, false};
  if (failed() || detached_) return handle;  // tests as kFailed
  if (!recvs_.push(RecvEntry{tag, data.data(), data.size()})) {
    fail(error(TM_ERROR_INTERNAL, "receive queue overflow (", recvs_.capacity(), " outstanding)"));
    return handle;
  }
  if (read_state_ == ReadState::kHeld) read_some();
  return handle;
}

RequestState StreamLink::test(RequestHandle request) const {
  uint64_t cancelled_from = request.is_send ? sends_cancelled_from_ : recvs_cancelled_from_;
  uint64_t cancelled_until = request.is_send ? sends_cancelled_until_ : recvs_cancelled_until_;
  if (request.seq >= cancelled_from && request.seq < cancelled_until) return RequestState::kFailed;
  uint64_t done = request.is_send ? sends_done_ : recvs_done_;
  if (request.seq < done) return RequestState::kDone;
  return failed() ? RequestState::kFailed : RequestState::kPending;
}

void StreamLink::cancel_pending() {
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

void StreamLink::advance_epoch(uint64_t epoch) {
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

void StreamLink::resume() {
  if (failed()) return;
  read_some();
  if (!failed()) write_some();
}

void StreamLink::cancel_receives() {
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

void StreamLink::send_control(const ControlMessage& message) {
  if (failed() || goodbye_queued_ || writes_closed_) return;
  if (enqueue_control(message)) write_some();
}

bool StreamLink::enqueue_control(const ControlMessage& message) {
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

void StreamLink::close_gracefully() {
  closing_ = true;
  if (writes_closed_) flushed_ = true;
  if (!failed()) write_some();
}

bool StreamLink::maybe_send_goodbye() {
  if (!closing_ || goodbye_queued_ || failed() || !sends_.empty()) return false;
  ControlMessage goodbye;
  goodbye.kind = FrameKind::kGoodbye;
  goodbye_queued_ = enqueue_control(goodbye);
  return goodbye_queued_;
}

void StreamLink::on_events(uint32_t events) {
  stream_->on_wakeup(events);
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) read_some();
  bool room = (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0;
  // Rings announce room with input (the reader's doorbell).
  if (stream_->writable_on_input() && (events & EPOLLIN)) room = room || has_writes_pending();
  if (!failed() && room) write_some();
}

// Work found in the rings by polling: read and write as for an event, but
// the socket (doorbells, the peer's end) is left to its own events.
void StreamLink::on_polled() {
  read_some();
  if (!failed() && has_writes_pending()) write_some();
}

// ---- writing ---------------------------------------------------------------

void StreamLink::write_some() {
  write_what_fits();
  if (failed()) return;
  watch_writable(!writes_closed_ && (!sends_.empty() || !controls_.empty()));
}

// The stream says what to watch while a frame waits for room (a socket asks
// for EPOLLOUT only then). Turning EPOLLOUT on when the socket has room
// already reports it at once: no wake-up is lost.
void StreamLink::watch_writable(bool want) {
  uint32_t interest = stream_->interest(want);
  if (interest == interest_ || !registered_) return;
  Status st = loop_.modify(stream_->fd(), interest, this);
  if (!st.ok()) return fail(st, false);
  interest_ = interest;
}

void StreamLink::write_what_fits() {
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
    stream_->shutdown_write();
    flushed_ = true;
  }
}

bool StreamLink::write_control() {
  ControlEntry& c = controls_.front();
  std::array<iovec, 2> iov;
  size_t count = add_frame_iov(iov.data(), c.header.data(), c.payload.data(), c.length, c.written);
  ssize_t n = send_iov(iov.data(), count);
  if (n < 0) {
    on_send_failed(errno);
    return false;
  }
  c.written += static_cast<size_t>(n);
  if (c.written == kFrameHeaderSize + c.length) controls_.pop();
  return n > 0;
}

bool StreamLink::write_data() {
  if (sends_.empty()) return false;
  std::array<iovec, kMaxIov> iov;
  size_t count = 0;
  for (size_t i = 0; i < sends_.size() && count + 2 <= kMaxIov; ++i) {
    SendEntry& e = sends_.at(i);
    count += add_frame_iov(iov.data() + count, e.header.data(), e.data, e.length, e.written);
  }
  ssize_t n = send_iov(iov.data(), count);
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

bool StreamLink::write_rescued() {
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
  ssize_t n = send_iov(iov.data(), count);
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

ssize_t StreamLink::read_into(std::byte* dst, size_t len) {
  while (true) {
    ssize_t n = stream_->read(dst, len);
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

void StreamLink::read_some() {
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

bool StreamLink::read_header() {
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

void StreamLink::on_header(const FrameHeader& header) {
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

void StreamLink::discard_frame(uint64_t payload_left) {
  discard_left_ = payload_left;
  read_state_ = ReadState::kDiscard;
}

// A data frame's header has been read: match it with the oldest posted receive.
bool StreamLink::match_held_frame() {
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

bool StreamLink::read_payload() {
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

bool StreamLink::discard_payload() {
  while (discard_left_ > 0) {
    ssize_t n =
        read_into(control_in_.data(), std::min<uint64_t>(discard_left_, control_in_.size()));
    if (n <= 0) return false;
    discard_left_ -= static_cast<uint64_t>(n);
  }
  read_state_ = ReadState::kHeader;
  return true;
}

bool StreamLink::read_control_payload() {
  ssize_t n = read_into(control_in_.data() + payload_got_, frame_.length - payload_got_);
  if (n <= 0) return false;
  payload_got_ += static_cast<size_t>(n);
  if (payload_got_ == frame_.length) on_control_frame();
  return true;
}

void StreamLink::on_control_frame() {
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

}  // namespace trainmover::transport
