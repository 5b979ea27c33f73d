// Diagnostics on stderr, one line per message. The level comes from
// TRAINMOVER_LOG (error, warn, info, debug; default warn), read once.
//
// Every line says when and who, so that the lines of several processes (of
// one host or, with synchronised clocks, of several) can be merged and read
// in order by sorting them as text:
//   2026-12-01T19:40:12.123456Z trainmover[4242] slot=3 epoch=1 warning: ...
// The time is UTC with microseconds; slot and epoch are "-" until a
// communicator of this process has them (a standby has no slot yet).
#pragma once

#include <cstdint>
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
// The text log_line() writes for `message` at this moment, without the
// newline.
std::string format_log_line(LogLevel level, const std::string& message);

// The slot and membership epoch printed on this process's lines (-1: none).
// Set by the communicator when it takes a slot or enters an epoch. One per
// process, as the pid is: a process with several communicators shows the
// last one set. Thread-safe.
void log_set_identity(int slot, int64_t epoch);

template <typename... Args>
void log(LogLevel level, const Args&... parts) {
  if (log_enabled(level)) log_line(level, str_cat(parts...));
}

}  // namespace trainmover
