// The process-wide state of libtrainmover-nccl.so.
//
// An LD_PRELOAD library has no entry point of its own: the first NCCL call,
// from any thread, creates this one object (a function-local static, so
// creation is thread-safe), which reads the settings, finds the real NCCL
// and starts the record or replay engine. It is the only global state of
// the library besides per-thread group queues and last-error text.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "common/status.h"
#include "record/nccl/real_nccl.h"
#include "record/nccl/record_engine.h"
#include "record/nccl/replay_engine.h"
#include "record/nccl/settings.h"

namespace trainmover::nccl {

class Interposer {
 public:
  static Interposer& get();

  Mode mode() const { return settings_.mode; }
  const RealNccl& real() const { return real_; }
  // Null when the mode is not record / replay, or when it failed to start.
  RecordEngine* record() { return record_.get(); }
  ReplayEngine* replay() { return replay_.get(); }
  // Why the mode could not start (bad settings, a rejected trace), or ok.
  const Status& startup() const { return startup_; }
  // Logs `message` the first time `key` is seen.
  void warn_once(const std::string& key, const std::string& message);

 private:
  Interposer();
  void start();

  Settings settings_;
  RealNccl real_;
  Status startup_;
  std::unique_ptr<RecordEngine> record_;
  std::unique_ptr<ReplayEngine> replay_;
  std::mutex warned_mu_;
  std::set<std::string> warned_;
};

}  // namespace trainmover::nccl
