// A single-threaded epoll loop with a thread-safe wake-up.
//
// Threading: run_once(), add(), modify() and remove() are called only from the
// loop's thread (the owner's progress thread); wake() may be called from any
// thread. The loop sleeps in epoll_wait while idle, so an idle engine costs no
// CPU.
//
// Registrations are edge-triggered: a handler must consume readiness until
// EAGAIN. A handler removed while a batch of events is being dispatched is
// not called for the rest of that batch, so handlers may remove (and destroy)
// themselves or each other from inside on_events().
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover {

class EventHandler {
 public:
  // `events` holds EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP and EPOLLRDHUP bits.
  virtual void on_events(uint32_t events) = 0;

 protected:
  ~EventHandler() = default;
};

// A handler that can also tell without a system call that it has work (a
// shared-memory link whose peer wrote into the ring). Its peer signals it
// on its descriptor only while it is armed: the loop arms every polled
// handler before it sleeps in epoll_wait and disarms them when it wakes, so
// a peer that writes while this side is awake (or spinning) makes no
// system call.
//  - has_work() reports each new piece of work once (what it saw is
//    remembered), so work the handler leaves for later cannot keep a
//    spinner from sleeping.
//  - arm() returns true when work came in while arming: do not sleep.
//  - on_polled() does the work found by polling (without the descriptor's
//    events; those still come through on_events()).
class PolledHandler : public EventHandler {
 public:
  virtual bool has_work() = 0;
  virtual bool arm() = 0;
  virtual void disarm() = 0;
  virtual void on_polled() = 0;

 protected:
  ~PolledHandler() = default;
};

class EventLoop {
 public:
  static Result<std::unique_ptr<EventLoop>> create();

  // `handler` must stay valid until remove(fd).
  Status add(int fd, uint32_t events, EventHandler* handler);
  // Also polled by spin() until remove(fd, handler).
  void add_polled(PolledHandler* handler);
  Status modify(int fd, uint32_t events, EventHandler* handler);
  void remove(int fd, EventHandler* handler);

  // Waits until an event, a wake() or `timeout`; dispatches what arrived.
  Status run_once(Duration timeout);
  // For up to `budget`, polls the handlers added with add_polled() (giving
  // the CPU away between looks) and dispatches EPOLLIN to those with work.
  // True when one had work; false at once when none is polled.
  bool spin(Duration budget);
  void wake();

 private:
  EventLoop(UniqueFd epoll, UniqueFd wake);
  bool removed_in_batch(EventHandler* handler) const;

  UniqueFd epoll_fd_;
  UniqueFd wake_fd_;
  std::vector<epoll_event> events_;
  std::vector<EventHandler*> removed_;
  std::vector<PolledHandler*> polled_;
  std::vector<PolledHandler*> found_;  // polled handlers with work, this pass
  bool dispatching_ = false;
};

}  // namespace trainmover
