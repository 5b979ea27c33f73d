#include "common/log.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace trainmover {
namespace {

LogLevel level_from_env() {
  const char* v = std::getenv("TRAINMOVER_LOG");
  if (v == nullptr) return LogLevel::kWarn;
  if (std::strcmp(v, "error") == 0) return LogLevel::kError;
  if (std::strcmp(v, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(v, "debug") == 0) return LogLevel::kDebug;
  return LogLevel::kWarn;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warning";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "?";
}

struct Identity {
  std::atomic<int> slot{-1};
  std::atomic<int64_t> epoch{-1};
};

Identity& identity() {
  static Identity who;
  return who;
}

// "2026-12-01T19:40:12.123456Z": fixed width, so text order is time order.
std::string utc_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  tm parts{};
  ::gmtime_r(&now.tv_sec, &parts);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &parts);
  char micros[16];
  std::snprintf(micros, sizeof micros, ".%06dZ", static_cast<int>(now.tv_nsec / 1000));
  return std::string(date) + micros;
}

std::string number_or_dash(int64_t value) { return value < 0 ? "-" : std::to_string(value); }

}  // namespace

bool log_enabled(LogLevel level) {
  static const LogLevel kThreshold = level_from_env();
  return level <= kThreshold;
}

std::string format_log_line(LogLevel level, const std::string& message) {
  const Identity& who = identity();
  return str_cat(utc_now(), " trainmover[", static_cast<int>(getpid()),
                 "] slot=", number_or_dash(who.slot.load(std::memory_order_relaxed)),
                 " epoch=", number_or_dash(who.epoch.load(std::memory_order_relaxed)), " ",
                 level_name(level), ": ", message);
}

void log_line(LogLevel level, const std::string& message) {
  // One fprintf per line so lines of concurrent threads do not interleave.
  std::fprintf(stderr, "%s\n", format_log_line(level, message).c_str());
}

void log_set_identity(int slot, int64_t epoch) {
  identity().slot.store(slot, std::memory_order_relaxed);
  identity().epoch.store(epoch, std::memory_order_relaxed);
}

}  // namespace trainmover
