// RingStream: the ByteStream (transport/byte_stream.h) of a link between two
// processes of one host: the bytes go through two SharedRings (shm/ring.h),
// one per direction, and a connected Unix socket beside them carries
//  - the descriptor of each side's ring, passed once (SCM_RIGHTS) as the
//    first byte each side writes after the handshake,
//  - doorbells: one byte when the other side sleeps on an empty or full ring,
//  - the liveness: a process that dies closes it, so the peer's event loop
//    hears of it at once, exactly as with TCP.
// The framing on top (StreamLink) is unchanged: every header is validated
// before its payload is copied into a posted buffer.
//
// Threading: one thread (the link's). Each side creates the ring it writes.
#pragma once

#include <memory>
#include <optional>

#include "common/status.h"
#include "common/unique_fd.h"
#include "transport/byte_stream.h"
#include "transport/shm/ring.h"
#include "transport/shm/ring_pool.h"

namespace trainmover::transport::shm {

class RingStream final : public ByteStream {
 public:
  // Creates this side's ring of `ring_bytes`, or takes a spare one from
  // `pool` (may be null), and passes it on `socket` (a connected,
  // non-blocking Unix stream socket, handshake done).
  static Result<std::unique_ptr<RingStream>> create(UniqueFd socket, size_t ring_bytes,
                                                    RingPool* pool = nullptr);

  int fd() const override { return socket_.get(); }
  void on_wakeup(uint32_t events) override;
  ssize_t read(std::byte* dst, size_t length) override;
  ssize_t write(const iovec* iov, size_t count) override;
  void shutdown_write() override;
  uint32_t interest(bool) const override { return EPOLLIN | EPOLLRDHUP; }
  bool writable_on_input() const override { return true; }
  bool pollable() const override { return true; }
  bool has_input() override;
  bool arm() override;
  void disarm() override;
  const char* kind() const override { return "shared memory"; }

 private:
  RingStream(UniqueFd socket, SharedRing out) : socket_(std::move(socket)), out_(std::move(out)) {}
  // Receives the peer's ring; false (errno set) until it is here.
  bool receive_peer_ring();
  // Reads and drops doorbells; false (errno set) on a socket error.
  bool drain_doorbells();
  void ring_doorbell();
  // True when the peer closed its socket entirely (nobody reads our ring).
  bool peer_hung_up() const;
  ssize_t fail_with(const Status& status);
  ssize_t failed_call() const;

  UniqueFd socket_;
  SharedRing out_;
  std::optional<SharedRing> in_;
  bool peer_closed_ = false;  // the socket reached its end: what is in the ring is all
  bool write_shut_ = false;
  int error_ = 0;
  uint64_t seen_head_ = 0;  // the peer's positions at the last has_input()
  uint64_t seen_tail_ = 0;  // the errno the stream failed with; every call fails from then on
};

}  // namespace trainmover::transport::shm
