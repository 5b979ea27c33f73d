#include "common/log.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

void log_line(LogLevel level, const std::string& message) {
  // One fprintf per line so lines of concurrent threads do not interleave.
  std::fprintf(stderr, "trainmover[%d] %s: %s\n", static_cast<int>(getpid()), level_name(level),
               message.c_str());
}

}  // namespace trainmover
