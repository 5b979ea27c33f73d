// Acceptor: the accepting side of a listening socket, for the event loops of
// the store server and the link transport (both edge-triggered).
//
// Edge-triggered readiness is reported once per new connection, so a
// listener that stops at an accept error it cannot fix at once (EMFILE,
// ENFILE, ENOBUFS) would never accept again once the queue is full: no new
// connection can arrive to report readiness. The acceptor therefore
//  - keeps one spare descriptor; when out of descriptors it closes it,
//    accepts the oldest queued connection and drops it at once (its client
//    sees a close and may retry instead of waiting in a full queue), and
//    reopens the spare;
//  - asks its owner to call accept_ready() again after kRetryPeriod (see
//    retry_at()), until accepting works again.
//
// Threading: the owner's loop thread only. Errors: none escape; a failed
// accept is logged once per episode and retried.
#pragma once

#include <functional>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::transport::tcp {

class Acceptor {
 public:
  static constexpr Duration kRetryPeriod = std::chrono::milliseconds(100);
  // Gets each accepted connection (non-blocking, close-on-exec).
  using OnAccepted = std::function<void(UniqueFd fd)>;

  // `what` names the listener in log lines ("store", "link listener").
  Acceptor(UniqueFd listen_fd, std::string what);

  int fd() const { return listen_fd_.get(); }
  // Accepts until the queue is empty or an error stops it.
  void accept_ready(const OnAccepted& on_accepted);
  // When accept_ready() must run again although no event comes; max() if not.
  Clock::time_point retry_at() const { return retry_at_; }

 private:
  void shed_one();

  UniqueFd listen_fd_;
  UniqueFd spare_;
  std::string what_;
  Clock::time_point retry_at_ = Clock::time_point::max();
};

}  // namespace trainmover::transport::tcp
