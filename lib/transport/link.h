// Link: a point-to-point, full-duplex connection between this process and the
// process serving one peer slot. Transports (tcp/, later shm/, ibverbs/,
// nccl/) implement it; the communicator builds every collective from links.
//
// Contract
//  - Threading: a link is used only from its owner's progress thread (the
//    engine). No method blocks.
//  - Sends: post_send() queues a data frame with `tag`; the bytes must stay
//    valid and unchanged until test() reports the request done. Sends
//    complete in the order they were posted.
//  - Receives: post_recv() queues a receive; incoming data frames are matched
//    to posted receives in FIFO order. A frame whose tag or length differs
//    from the receive it meets is a protocol error: both ends must post in
//    the same order (as in NCCL). Receives complete in posting order. A data
//    frame that arrives before its receive is posted waits in the kernel's
//    socket buffer (back-pressure); nothing is buffered in user space.
//  - Errors: once status() is not ok the link is dead: pending and new
//    requests test as kFailed, and the status says why, naming the peer slot.
//    A dead link is never revived; the owner replaces it. When the peer stops
//    reading (a write fails) while no data send of ours is pending, the link
//    is not dead yet: it drops control frames and keeps delivering what the
//    peer sent before (a peer that left right after its part), and dies where
//    that stream ends, or when a send is posted.
//  - cancel_pending() abandons every posted request at once (see below).
//  - Control frames (heartbeat, abort) are delivered to the LinkObserver as
//    soon as they are read, with the epoch they were sent in; they may
//    overtake queued data frames.
//  - Epochs: every frame carries the sender's membership epoch. Data frames
//    of an older epoch than the link's are read and dropped (a fence: stale
//    data never reaches a receive), frames of a newer epoch wait in the
//    socket until the link advances to it, like a frame with no receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"
#include "transport/control.h"

namespace trainmover::transport {

struct RequestHandle {
  uint64_t seq = 0;
  bool is_send = false;
};

enum class RequestState { kPending, kDone, kFailed };

class Link;

// Receives what a link reports. Called on the progress thread from inside
// the link's event handling: implementations must not destroy the link there.
class LinkObserver {
 public:
  virtual void on_control(Link& link, const ControlMessage& message) = 0;
  // The link has just died; link.status() says why.
  virtual void on_link_failed(Link& link) = 0;

 protected:
  ~LinkObserver() = default;
};

class Link {
 public:
  virtual ~Link() = default;

  virtual int peer_slot() const = 0;
  virtual uint64_t peer_instance() const = 0;

  virtual RequestHandle post_send(uint64_t tag, std::span<const std::byte> data) = 0;
  virtual RequestHandle post_recv(uint64_t tag, std::span<std::byte> data) = 0;
  virtual RequestState test(RequestHandle request) const = 0;
  // Requests posted but not yet complete, per direction.
  virtual size_t pending_sends() const = 0;
  virtual size_t pending_recvs() const = 0;

  // Detaches the link from every posted buffer, so the caller may free them:
  // pending requests test as kFailed, a frame half sent is completed with
  // zero bytes, and incoming data frames are read and discarded from now on.
  // Control frames keep flowing. Used when an operation is abandoned.
  virtual void cancel_pending() = 0;
  // Moves the link to a later membership epoch (a switch): frames sent from
  // now on carry it, incoming frames of earlier epochs are dropped, and a
  // link detached by cancel_pending() takes new requests again. Requests
  // still pending test as kFailed. Does no I/O: call resume() on every
  // link afterwards.
  virtual void advance_epoch(uint64_t epoch) = 0;
  // Reads and writes what the socket allows now (edge-triggered events do
  // not repeat for data that arrived before advance_epoch()).
  virtual void resume() = 0;
  virtual uint64_t epoch() const = 0;
  // Queues a heartbeat or abort; dropped silently once the link is dead.
  virtual void send_control(const ControlMessage& message) = 0;
  // Sends goodbye after every queued data frame, then shuts the write side.
  virtual void close_gracefully() = 0;
  // True once close_gracefully() has written everything and the goodbye.
  virtual bool flushed() const = 0;

  virtual const Status& status() const = 0;
  bool failed() const { return !status().ok(); }
  // True once the peer has said goodbye.
  virtual bool peer_left() const = 0;
};

}  // namespace trainmover::transport
