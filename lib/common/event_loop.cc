#include "common/event_loop.h"

#include <sched.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace trainmover {

Result<std::unique_ptr<EventLoop>> EventLoop::create() {
  UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
  if (!ep.valid()) return system_error("epoll_create1", errno);
  UniqueFd wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) return system_error("eventfd", errno);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // nullptr marks the wake-up fd
  if (epoll_ctl(ep.get(), EPOLL_CTL_ADD, wake.get(), &ev) != 0) {
    return system_error("epoll_ctl(eventfd)", errno);
  }
  return std::unique_ptr<EventLoop>(new EventLoop(std::move(ep), std::move(wake)));
}

EventLoop::EventLoop(UniqueFd epoll, UniqueFd wake)
    : epoll_fd_(std::move(epoll)), wake_fd_(std::move(wake)), events_(64) {}

Status EventLoop::add(int fd, uint32_t events, EventHandler* handler) {
  epoll_event ev{};
  ev.events = events | EPOLLET;
  ev.data.ptr = handler;
  if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
    return system_error("epoll_ctl(ADD)", errno);
  return Status::Ok();
}

Status EventLoop::modify(int fd, uint32_t events, EventHandler* handler) {
  epoll_event ev{};
  ev.events = events | EPOLLET;
  ev.data.ptr = handler;
  if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &ev) != 0)
    return system_error("epoll_ctl(MOD)", errno);
  return Status::Ok();
}

void EventLoop::add_polled(PolledHandler* handler) { polled_.push_back(handler); }

void EventLoop::remove(int fd, EventHandler* handler) {
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  std::erase(polled_, handler);
  if (dispatching_) removed_.push_back(handler);
}

bool EventLoop::spin(Duration budget) {
  if (polled_.empty()) return false;
  Clock::time_point until = Clock::now() + budget;
  found_.clear();
  while (true) {
    for (PolledHandler* h : polled_)
      if (h->has_work()) found_.push_back(h);
    if (!found_.empty()) break;
    if (Clock::now() >= until) return false;
    sched_yield();  // the peer we wait for may need this CPU
  }
  dispatching_ = true;
  for (PolledHandler* h : found_)
    if (!removed_in_batch(h)) h->on_polled();
  dispatching_ = false;
  removed_.clear();
  return true;
}

bool EventLoop::removed_in_batch(EventHandler* handler) const {
  return std::find(removed_.begin(), removed_.end(), handler) != removed_.end();
}

Status EventLoop::run_once(Duration timeout) {
  // Sleep at most a minute at a time; the caller loops anyway.
  Duration capped = std::min<Duration>(timeout, std::chrono::minutes(1));
  int timeout_ms = Deadline::after(capped).poll_timeout_ms();
  // Polled handlers are signalled only while armed: arm them all before a
  // sleep, and do not sleep if one got work meanwhile.
  found_.clear();
  if (timeout_ms != 0) {
    for (PolledHandler* h : polled_)
      if (h->arm()) found_.push_back(h);
    if (!found_.empty()) timeout_ms = 0;
  }
  int n = epoll_wait(epoll_fd_.get(), events_.data(), static_cast<int>(events_.size()), timeout_ms);
  for (PolledHandler* h : polled_) h->disarm();
  if (n < 0) {
    if (errno == EINTR) return Status::Ok();
    return system_error("epoll_wait", errno);
  }
  dispatching_ = true;
  for (int i = 0; i < n; ++i) {
    auto* handler = static_cast<EventHandler*>(events_[i].data.ptr);
    if (handler == nullptr) {
      uint64_t count;
      while (read(wake_fd_.get(), &count, sizeof count) > 0) {
      }
      continue;
    }
    if (!removed_in_batch(handler)) handler->on_events(events_[i].events);
  }
  for (PolledHandler* h : found_)
    if (!removed_in_batch(h)) h->on_polled();
  dispatching_ = false;
  removed_.clear();
  return Status::Ok();
}

void EventLoop::wake() {
  uint64_t one = 1;
  // EAGAIN means the counter is already non-zero: a wake-up is pending anyway.
  [[maybe_unused]] ssize_t n = write(wake_fd_.get(), &one, sizeof one);
}

}  // namespace trainmover
