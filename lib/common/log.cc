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

// A bad value is refused where the configuration is read (tm_config_init);
// here, before that, it means the default.
LogLevel level_from_env() {
  const char* v = std::getenv("TRAINMOVER_LOG");
  if (v == nullptr) return LogLevel::kWarn;
  auto level = parse_log_level(v);
  return level.ok() ? level.value() : LogLevel::kWarn;
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

Result<LogLevel> parse_log_level(std::string_view text) {
  if (text == "error") return LogLevel::kError;
  if (text == "warn") return LogLevel::kWarn;
  if (text == "info") return LogLevel::kInfo;
  if (text == "debug") return LogLevel::kDebug;
  return error(TM_ERROR_INVALID_ARGUMENT, "'", text,
               "' is not a log level (error, warn, info or debug)");
}

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
