// An exclusive advisory lock (flock) on a lock file, waited for with a
// timeout: replicas of one role take it while they check for and write the
// role's trace, so that replicas finishing together write it once.
//
// Advisory and best effort by design: callers must stay correct without it
// (trace files are placed with link(), which lets one writer win). The lock
// file is created (mode 0640) if missing and left in place, since removing
// it would race with the next holder. Released when the FileLock goes away,
// or by the kernel if the process dies.
//
// Errors: TM_ERROR_TIMEOUT when another holder keeps it past `wait`;
// TM_ERROR_SYSTEM when the file cannot be created or the filesystem has no
// locks (e.g. ENOLCK). Not thread-safe; one FileLock per holder.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::record {

class FileLock {
 public:
  static Result<FileLock> acquire(const std::string& path, std::chrono::milliseconds wait);

 private:
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;  // closing it releases the lock
};

}  // namespace trainmover::record
