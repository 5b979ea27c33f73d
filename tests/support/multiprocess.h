// Multi-process test harness: a real rendezvous store in a process of its
// own, and one forked child process per slot, talking over real sockets.
//
// The store runs in its own process so that the test process has no other
// thread when it forks the slots: a child forked while another thread held
// a lock (OpenSSL's, the allocator's) could deadlock, and LeakSanitizer in a
// child would report that thread's live allocations as leaks.
//
// Children run a function and _exit() with its return value, skipping the
// test framework's exit handlers. Every run is bounded: children still alive
// at the deadline are killed and reported as such.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/config.h"
#include "common/secret.h"
#include "common/unique_fd.h"

namespace trainmover::testing {

// What a child's exit looked like.
struct ChildExit {
  int code = -1;   // exit code when it exited
  int signal = 0;  // the signal that killed it, else 0
  bool timed_out = false;
  bool ok() const { return signal == 0 && !timed_out && code == 0; }
  std::string describe() const;
};

class TestJob {
 public:
  // store_fd_limit > 0: the store process runs with that RLIMIT_NOFILE.
  // The store listens on `store_host` (empty: the address the store factory
  // chooses from TRAINMOVER_SOCKET_IFNAME).
  explicit TestJob(int store_fd_limit = 0, const std::string& store_host = "127.0.0.1");
  ~TestJob();

  // A valid configuration for `slot` of `nslots`, with short timeouts.
  CommConfig config(int slot, int nslots, const std::string& name = "test") const;
  const JobSecret& secret() const { return secret_; }
  uint64_t job_id() const { return job_id_; }
  const std::string& store_address() const { return store_address_; }

  // Runs body(slot) in one child process per slot; waits at most `timeout`.
  std::vector<ChildExit> run(int nslots, const std::function<int(int)>& body,
                             std::chrono::seconds timeout = std::chrono::seconds(60)) const;

 private:
  JobSecret secret_;
  uint64_t job_id_;
  pid_t store_pid_ = -1;
  std::string store_address_;
};

// Lowers this process's RLIMIT_NOFILE (soft and hard) to `limit`.
bool limit_fds(int limit);
// Opens `count` non-blocking TCP connections to `address` ("host:port") that
// never send a byte; fewer if this process runs out of descriptors.
std::vector<UniqueFd> silent_connections(const std::string& address, int count);
// The same on the abstract Unix socket "@name" of a shared-memory listener;
// fewer if the listener's queue is full.
std::vector<UniqueFd> silent_local_connections(const std::string& name, int count);

// Forks one child running body(); returns its pid.
pid_t fork_child(const std::function<int()>& body);
// Waits for the children until `timeout`, then kills those left.
std::vector<ChildExit> wait_children(const std::vector<pid_t>& pids, std::chrono::seconds timeout);

}  // namespace trainmover::testing
