#include "common/log.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

}  // namespace

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
