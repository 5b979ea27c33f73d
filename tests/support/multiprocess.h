// Multi-process test harness: a real rendezvous store in the test process
// and one forked child process per slot, talking over real sockets.
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
#include "rendezvous/tcp_store_server.h"

namespace trainmover::testing {

// What a child's exit looked like.
struct ChildExit {
  int code = -1;     // exit code when it exited
  int signal = 0;    // the signal that killed it, else 0
  bool timed_out = false;
  bool ok() const { return signal == 0 && !timed_out && code == 0; }
  std::string describe() const;
};

class TestJob {
 public:
  TestJob();
  ~TestJob();

  // A valid configuration for `slot` of `nslots`, with short timeouts.
  CommConfig config(int slot, int nslots, const std::string& name = "test") const;
  const JobSecret& secret() const { return secret_; }
  uint64_t job_id() const { return job_id_; }
  const std::string& store_address() const { return server_->address(); }

  // Runs body(slot) in one child process per slot; waits at most `timeout`.
  std::vector<ChildExit> run(int nslots, const std::function<int(int)>& body,
                             std::chrono::seconds timeout = std::chrono::seconds(60)) const;

 private:
  JobSecret secret_;
  uint64_t job_id_;
  std::unique_ptr<rendezvous::TcpStoreServer> server_;
};

// Forks one child running body(); returns its pid.
pid_t fork_child(const std::function<int()>& body);
// Waits for the children until `timeout`, then kills those left.
std::vector<ChildExit> wait_children(const std::vector<pid_t>& pids, std::chrono::seconds timeout);

}  // namespace trainmover::testing
