#include "control/event_log.h"

#include <fcntl.h>

#include <cerrno>
#include <chrono>

#include "common/log.h"
#include "control/control_protocol.h"

namespace trainmover::control {

Result<std::unique_ptr<EventLog>> EventLog::open(const std::string& path) {
  if (path.empty()) return std::unique_ptr<EventLog>(new EventLog(nullptr));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return system_error("cannot open the events file " + path, errno);
  std::FILE* file = fdopen(fd, "a");
  if (!file) {
    int saved = errno;
    ::close(fd);
    return system_error("fdopen " + path, saved);
  }
  return std::unique_ptr<EventLog>(new EventLog(file));
}

EventLog::~EventLog() {
  if (file_) std::fclose(file_);
}

const nlohmann::json& EventLog::record(const std::string& name, nlohmann::json fields) {
  auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  nlohmann::json event = {{"time", std::chrono::duration<double>(since_epoch).count()},
                          {"elapsed_s", to_seconds(Clock::now() - opened_)},
                          {"event", name}};
  if (fields.is_object()) event.update(fields);
  if (file_ && !write_failed_) {
    std::string line = json_text(event);
    line += '\n';
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
      write_failed_ = true;
      log(LogLevel::kError,
          "coordinator: writing the events file failed; events are kept in "
          "memory only from now on");
    }
  }
  events_.push_back(std::move(event));
  if (events_.size() > kMaxKept) events_.pop_front();
  return events_.back();
}

}  // namespace trainmover::control
