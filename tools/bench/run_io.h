// What the recovery benchmarks share: a job started with its output on one
// pipe, the wall clock of the event log, and the event log itself.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::bench {

// Wall-clock seconds (the event log's "time" is Unix time too).
double unix_now();

// The whole file; empty when it cannot be read.
std::string read_text(const std::string& path);

// `program` as a path execv can run: itself when it has a '/', else the
// first executable of that name on PATH (or itself, unchanged, if none).
std::string program_path(const std::string& program);

struct Launched {
  pid_t pid = -1;
  UniqueFd out;  // its stdout and stderr, non-blocking
};

// Starts argv[0] (a path) in its own process group, stdout and stderr on one
// pipe, killed if this process dies. `env` entries ("K=V") are added.
Result<Launched> launch(const std::vector<std::string>& argv,
                        const std::vector<std::string>& env = {});

using LineHandler = std::function<Status(const std::string& line, double now)>;

// Appends `chunk` (read at `now`) to `partial` and hands each complete line
// to `on_line`, all of them; returns the first error it returned.
Status hand_lines(std::string& partial, std::string_view chunk, double now,
                  const LineHandler& on_line);

// Reads `run`'s output until it exits, handing each line to `on_line` with
// its arrival time (unix_now()); stops early with the first error on_line
// returns, or a timeout at `deadline` (`timeout_s` names it). Returns the
// wait status and reaps the process.
Result<int> read_lines_until_exit(Launched& run, Deadline deadline, double timeout_s,
                                  const LineHandler& on_line);

// The event log, one JSON object a line.
Result<std::vector<Json>> read_events(const std::string& path);

// The first event named `name` (and, when given, with restart == `restart`).
std::optional<Json> find_event(const std::vector<Json>& events, const std::string& name,
                               int restart = -1);

}  // namespace trainmover::bench
