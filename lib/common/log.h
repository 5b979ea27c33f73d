// Diagnostics on stderr, one line per message, prefixed "trainmover".
// The level comes from TRAINMOVER_LOG (error, warn, info, debug; default
// warn), read once.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/str.h"

namespace trainmover {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// "error", "warn", "info" or "debug".
Result<LogLevel> parse_log_level(std::string_view text);
bool log_enabled(LogLevel level);
void log_line(LogLevel level, const std::string& message);

template <typename... Args>
void log(LogLevel level, const Args&... parts) {
  if (log_enabled(level)) log_line(level, str_cat(parts...));
}

}  // namespace trainmover
