// Lifeline: hears of a process's death at the start of its exit.
//
// Why: a killed process tells the peers of its sockets, the reader of its
// pipes and waitpid() only at the end of its exit, after the kernel has torn
// down its address space: milliseconds for a rank with shared-memory rings
// mapped, more while its last thread waits for a CPU, and a whole core dump
// for a crash. The kernel releases a dying thread's robust mutexes first
// (exit_mm, before the memory goes) and wakes their waiter. So the process's
// starter (the watcher) shares a page with it whose robust, process-shared
// mutex one thread of the process holds, doing nothing else: that thread is
// asleep, so it gets a CPU at once when the kill wakes it, and the mutex
// comes to the watcher marked owner-dead as soon as it begins its exit.
//
// What it cannot tell: a process that stops (SIGSTOP, a hang) or a host that
// goes: heartbeats and links tell those. A process that ends on purpose
// releases its lifeline first (LifelineHolder::release), so its exit is none
// of the lifeline's business; a holder that was never armed tells nothing.
//
// The page reaches the process as an inherited memfd whose number is in
// TRAINMOVER_LIFELINE_FD (kLifelineFdEnv).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::control {

inline constexpr const char* kLifelineFdEnv = "TRAINMOVER_LIFELINE_FD";

struct LifelinePage;  // lifeline.cc: the shared page's layout

// A shared page, unmapped when the last owner goes.
class LifelineMapping {
 public:
  LifelineMapping() = default;
  explicit LifelineMapping(LifelinePage* page) : page_(page) {}
  LifelineMapping(LifelineMapping&& other) noexcept : page_(std::exchange(other.page_, nullptr)) {}
  LifelineMapping& operator=(LifelineMapping&&) = delete;
  ~LifelineMapping();
  LifelinePage* get() const { return page_; }

 private:
  LifelinePage* page_ = nullptr;
};

// The watcher's end, in the process that starts the watched one.
// Threading: create(), fd() and watch() on one thread; on_death runs on the
// watch's own thread, at most once. The destructor stops and joins that
// thread (at once when the holder has died or was never armed; within
// 200 ms while a holder is alive).
class LifelineWatch {
 public:
  // A fresh page, and its memfd (close-on-exec: the spawner clears that in
  // the child only, so no other child inherits it).
  static Result<std::unique_ptr<LifelineWatch>> create();
  ~LifelineWatch();
  LifelineWatch(const LifelineWatch&) = delete;
  LifelineWatch& operator=(const LifelineWatch&) = delete;

  int fd() const { return fd_.get(); }
  // Once the child has the descriptor: closes ours and starts watching.
  // `on_death` runs when the holder's thread begins its exit without having
  // released the lifeline.
  Status watch(std::function<void()> on_death);

 private:
  LifelineWatch(UniqueFd fd, LifelineMapping page) : fd_(std::move(fd)), page_(std::move(page)) {}
  void run(const std::function<void()>& on_death);

  UniqueFd fd_;
  LifelineMapping page_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The watched process's end. Threading: any thread may call release(); the
// holder's own thread only sleeps.
class LifelineHolder {
 public:
  // Takes the lifeline named by TRAINMOVER_LIFELINE_FD and returns once it
  // holds it (armed). nullptr when the variable is unset: nothing watches
  // this process so. An error when the descriptor is no lifeline.
  static Result<std::unique_ptr<LifelineHolder>> from_env();
  // Takes the lifeline of `fd` (closed here: the mapping stays).
  static Result<std::unique_ptr<LifelineHolder>> take(UniqueFd fd);
  ~LifelineHolder();  // release()
  LifelineHolder(const LifelineHolder&) = delete;
  LifelineHolder& operator=(const LifelineHolder&) = delete;

  // The process ends on purpose: its exit from now on is no failure. Waits
  // for the holder's thread. Idempotent.
  void release();

 private:
  explicit LifelineHolder(LifelineMapping page) : page_(std::move(page)) {}
  Status start();
  void hold();

  LifelineMapping page_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool release_ = false;
  Status arm_status_;
  std::thread thread_;
};

}  // namespace trainmover::control
