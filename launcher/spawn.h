// Starting one child process for a local job: fork + execve with a prepared
// environment, optionally with its stdout on a pipe.
//
// fork + exec rather than posix_spawn because the child must, before exec,
// enter its own process group (so a rank and anything it starts can be
// signalled as one) and, unless asked not to, be SIGKILLed when its parent
// dies (so a killed launcher leaves no orphan ranks). Exec failures are reported back
// through a close-on-exec pipe, so a missing program is an error here rather
// than a mysterious exit status 127.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "control/lifeline.h"

namespace trainmover::launcher {

struct SpawnRequest {
  std::string path;               // the executable, already resolved
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value" entries, the complete environment
  bool capture_stdout = false;
  // SIGKILL the child when its parent dies (PR_SET_PDEATHSIG). A rank with a
  // control channel goes without: it notices the coordinator's loss itself,
  // says so, and stops (ControlClient), as it must under Slurm, where the
  // coordinator is not its parent.
  bool die_with_parent = true;
  // Close-on-exec descriptors of ours that the child keeps across its exec
  // (a lifeline: control/lifeline.h), at the same numbers.
  std::vector<int> inherit_fds{};
};

struct SpawnedChild {
  pid_t pid = -1;          // also its process group id
  UniqueFd stdout_reader;  // non-blocking read end, when captured
};

// A lifeline (control/lifeline.h) for the child `request` starts: its
// variable goes into request.env and its descriptor into inherit_fds. Once
// the child runs, start watching it with LifelineWatch::watch.
Result<std::unique_ptr<control::LifelineWatch>> add_lifeline(SpawnRequest& request);

// Starts the child. PR_SET_PDEATHSIG ties it to the calling *thread*: call
// from a thread that outlives the child (the main thread, in our tools).
Result<SpawnedChild> spawn_child(const SpawnRequest& request);

// Reaps `pid` if it has exited within `limit`, polling; SIGKILLs its group
// and reaps it if not. For error paths, where the child must not outlive us.
void kill_and_reap(pid_t pid, Duration limit);

}  // namespace trainmover::launcher
