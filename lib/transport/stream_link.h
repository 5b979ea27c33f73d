// StreamLink: the Link (transport/link.h) over one ByteStream
// (transport/byte_stream.h): a TCP connection, or shared-memory rings
// between two processes of one host; always after a successful handshake.
//
// Every frame is a 48-byte header (transport/frame.h) and its payload. Sends
// are written straight from the caller's buffer and several queued frames go
// out in one sendmsg(); receives are read straight into the posted buffer,
// header first, so a frame is validated before any of its payload lands in
// user memory. Control frames are kept in a small queue of their own and go
// out between data frames.
//
// Threading: engine thread only (see Link). The EventLoop must outlive the
// link; the link deregisters itself when it fails or is destroyed.
#pragma once

#include <sys/uio.h>

#include <memory>
#include <string>
#include <vector>

#include "common/bounded_queue.h"
#include "common/event_loop.h"
#include "transport/byte_stream.h"
#include "transport/frame.h"
#include "transport/link.h"

namespace trainmover::transport {

class StreamLink final : public Link, private PolledHandler {
 public:
  struct Options {
    uint64_t job_id = 0;
    uint64_t epoch = 0;  // the link's first epoch (advance_epoch moves it on)
    int32_t local_slot = -1;
    int32_t peer_slot = -1;
    uint64_t peer_instance = 0;
    uint64_t max_frame_bytes = uint64_t{1} << 31;
    size_t max_outstanding = 512;  // per direction
    std::string peer_name;         // for messages: "slot 3 (10.0.0.2:4000)"
  };

  static Result<std::unique_ptr<StreamLink>> create(EventLoop& loop,
                                                    std::unique_ptr<ByteStream> stream,
                                                    const Options& options, LinkObserver* observer);
  ~StreamLink() override;

  int peer_slot() const override { return options_.peer_slot; }
  uint64_t peer_instance() const override { return options_.peer_instance; }
  RequestHandle post_send(uint64_t tag, std::span<const std::byte> data) override;
  RequestHandle post_recv(uint64_t tag, std::span<std::byte> data) override;
  RequestState test(RequestHandle request) const override;
  size_t pending_sends() const override { return sends_.size(); }
  size_t pending_recvs() const override { return recvs_.size(); }
  void cancel_pending() override;
  void advance_epoch(uint64_t epoch) override;
  void resume() override;
  uint64_t epoch() const override { return epoch_; }
  void send_control(const ControlMessage& message) override;
  void close_gracefully() override;
  bool flushed() const override { return flushed_; }
  const Status& status() const override { return status_; }
  bool peer_left() const override { return peer_left_; }

 private:
  struct SendEntry {
    FrameHeaderBytes header{};
    const std::byte* data = nullptr;
    size_t length = 0;     // payload bytes
    size_t written = 0;    // of header + payload
    bool rescued = false;  // cancelled mid-frame: the rest of the payload is in rescue_
  };
  struct ControlEntry {
    FrameHeaderBytes header{};
    ControlPayload payload{};
    size_t length = 0;
    size_t written = 0;
    FrameKind kind = FrameKind::kHeartbeat;
  };
  struct RecvEntry {
    uint64_t tag = 0;
    std::byte* data = nullptr;
    size_t length = 0;
  };
  enum class ReadState { kHeader, kHeld, kPayload, kControlPayload, kDiscard };
  static constexpr uint64_t kNotCancelled = UINT64_MAX;

  StreamLink(EventLoop& loop, std::unique_ptr<ByteStream> stream, const Options& options,
             LinkObserver* observer);

  void on_events(uint32_t events) override;
  bool has_work() override { return stream_->has_input(); }
  bool arm() override { return stream_->arm(); }
  void disarm() override { stream_->disarm(); }
  void on_polled() override;
  FrameHeader make_header(FrameKind kind, uint64_t tag, uint64_t length) const;

  // Frames to write, or the goodbye of a close still to finish.
  bool has_writes_pending() const {
    return !sends_.empty() || !controls_.empty() || (closing_ && !flushed_);
  }
  bool enqueue_control(const ControlMessage& message);
  void write_some();
  void write_what_fits();
  void watch_writable(bool want);
  bool write_control();
  bool write_data();
  bool write_rescued();
  bool maybe_send_goodbye();

  void read_some();
  bool read_header();
  bool read_payload();
  bool read_control_payload();
  bool discard_payload();
  void on_header(const FrameHeader& header);
  void discard_frame(uint64_t payload_left);
  bool match_held_frame();
  void on_control_frame();

  // Writes what the stream takes; returns bytes written, 0 when it would
  // block, -1 on error (errno set).
  ssize_t send_iov(const iovec* iov, size_t count);
  // Reads into [dst, dst+len); returns bytes read, 0 when it would block.
  // On end of stream or error the link fails and -1 is returned.
  ssize_t read_into(std::byte* dst, size_t len);
  // `blame_peer`: the status names the peer slot as the one at fault.
  void fail(Status status, bool blame_peer = true);
  // A socket call failed: the peer is gone or unreachable.
  void fail_io(const char* call, int errno_value);
  void on_send_failed(int errno_value);
  void salvage_control_frames();
  void send_parting_abort();
  void cancel_receives();

  EventLoop& loop_;
  std::unique_ptr<ByteStream> stream_;
  Options options_;
  LinkObserver* observer_;
  Status status_;
  bool registered_ = false;
  uint32_t interest_ = 0;  // the events registered with the loop
  uint64_t epoch_ = 0;

  BoundedQueue<SendEntry> sends_;
  BoundedQueue<ControlEntry> controls_;
  uint64_t sends_posted_ = 0;
  uint64_t sends_done_ = 0;
  // Sends and receives with sequence numbers in [from, until) were cancelled.
  uint64_t sends_cancelled_from_ = kNotCancelled;
  uint64_t recvs_cancelled_from_ = kNotCancelled;
  uint64_t sends_cancelled_until_ = kNotCancelled;
  uint64_t recvs_cancelled_until_ = kNotCancelled;
  bool detached_ = false;          // cancel_pending() was called: no new requests are queued
  std::vector<std::byte> rescue_;  // the unsent rest of a frame cancelled half-way
  size_t rescue_base_ = 0;         // payload offset that rescue_[0] stands for
  bool closing_ = false;
  bool writes_closed_ = false;  // a send failed with nothing of ours lost: reading goes on
  int write_errno_ = 0;
  bool goodbye_queued_ = false;
  bool flushed_ = false;

  BoundedQueue<RecvEntry> recvs_;
  uint64_t recvs_posted_ = 0;
  uint64_t recvs_done_ = 0;
  bool discarding_ = false;  // data frames are read and dropped (after cancel_pending)
  uint64_t discard_left_ = 0;
  ReadState read_state_ = ReadState::kHeader;
  FrameHeaderBytes header_bytes_{};
  size_t header_got_ = 0;
  FrameHeader frame_;
  size_t payload_got_ = 0;
  ControlPayload control_in_{};
  bool peer_left_ = false;
  bool salvaging_ = false;
};

}  // namespace trainmover::transport
