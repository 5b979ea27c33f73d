// EventLog: the coordinator's record of what happened to the job. Each event
// is a JSON object {"time": unix seconds, "elapsed_s": since the log opened,
// "event": NAME, ...fields}; it is appended to the events file (one JSON
// object a line, flushed at once, so a crash loses nothing written) and kept
// in memory, the newest kMaxKept, for `trainmover-ctl events`.
//
// Threading: none; the coordinator's loop thread owns it.
#pragma once

#include <cstdio>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace trainmover::control {

class EventLog {
 public:
  static constexpr size_t kMaxKept = 10000;

  // `path` empty: memory only. The file is created 0600 (events name hosts
  // and pids) and appended to.
  static Result<std::unique_ptr<EventLog>> open(const std::string& path);
  ~EventLog();

  // Stamps and stores the event; returns the stored object.
  const nlohmann::json& record(const std::string& name, nlohmann::json fields);
  const std::deque<nlohmann::json>& events() const { return events_; }

 private:
  explicit EventLog(std::FILE* file) : file_(file) {}
  std::FILE* file_;
  Clock::time_point opened_ = Clock::now();
  std::deque<nlohmann::json> events_;
  bool write_failed_ = false;
};

}  // namespace trainmover::control
