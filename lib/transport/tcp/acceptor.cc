#include "transport/tcp/acceptor.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.h"

namespace trainmover::transport::tcp {
namespace {
UniqueFd open_spare() { return UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC)); }
}  // namespace

Acceptor::Acceptor(UniqueFd listen_fd, std::string what)
    : listen_fd_(std::move(listen_fd)), spare_(open_spare()), what_(std::move(what)) {}

void Acceptor::accept_ready(const OnAccepted& on_accepted) {
  while (true) {
    int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      if (retry_at_ != Clock::time_point::max())
        log(LogLevel::kInfo, what_, ": accepting connections again");
      retry_at_ = Clock::time_point::max();
      if (!spare_.valid()) spare_ = open_spare();
      on_accepted(UniqueFd(fd));
      continue;
    }
    int e = errno;
    if (e == EINTR || e == ECONNABORTED) continue;
    if (e == EAGAIN || e == EWOULDBLOCK) return;
    if (retry_at_ == Clock::time_point::max()) {
      log(LogLevel::kWarn, what_,
          ": cannot accept a connection: ", system_error("accept", e).message(),
          "; retrying every ", to_seconds(kRetryPeriod), " s");
    }
    if (e == EMFILE || e == ENFILE) shed_one();
    retry_at_ = Clock::now() + kRetryPeriod;
    return;
  }
}

// Out of descriptors: the spare makes room to take the oldest queued
// connection off the queue and close it.
void Acceptor::shed_one() {
  if (!spare_.valid()) return;
  spare_.reset();
  int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    log(LogLevel::kDebug, what_, ": out of file descriptors, dropped a queued connection");
  }
  spare_ = open_spare();
}

}  // namespace trainmover::transport::tcp
