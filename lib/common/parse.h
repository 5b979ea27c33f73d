// Parsing of user-supplied numbers, sizes and durations, with errors that
// name the offending text. Used for command lines and environment variables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainmover {

// "4096", "4K", "4KiB", "1M", "16MB", "1G" (binary multiples).
Result<uint64_t> parse_size(std::string_view text);
// Comma-separated sizes: "4K,1M,16M".
Result<std::vector<uint64_t>> parse_size_list(std::string_view text);
// A decimal integer within [min, max].
Result<int64_t> parse_int(std::string_view text, int64_t min, int64_t max);
// Comma-separated integers within [min, max].
Result<std::vector<int64_t>> parse_int_list(std::string_view text, int64_t min, int64_t max);
// Seconds: "5", "0.5", "250ms", "2s", "1m"; must be >= 0.
Result<double> parse_seconds(std::string_view text);

// The value of an environment variable, or nullopt when unset or empty.
std::optional<std::string> get_env(const char* name);

}  // namespace trainmover
