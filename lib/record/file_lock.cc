#include "record/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace trainmover::record {

Result<FileLock> FileLock::acquire(const std::string& path, std::chrono::milliseconds wait) {
  using Clock = std::chrono::steady_clock;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640));
  if (!fd.valid()) return system_error(str_cat("create lock file ", path), errno);
  const auto deadline = Clock::now() + wait;
  // Polled rather than a blocking flock(), which has no timeout. Holders
  // keep it for milliseconds (one trace write), so start with short naps.
  auto nap = std::chrono::microseconds(500);
  for (;;) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return FileLock(std::move(fd));
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return system_error(str_cat("lock ", path), errno);
    if (Clock::now() >= deadline) {
      return error(TM_ERROR_TIMEOUT, "lock ", path, ": still held by another process after ",
                   wait.count(), " ms");
    }
    std::this_thread::sleep_for(nap);
    nap = std::min<std::chrono::microseconds>(nap * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace trainmover::record
