// JSON as every tool writes and reads it: one object per line, through
// nlohmann-json (never by hand).
//
// Writing: json_line() prints keys in insertion order (ordered_json).
// A number that is not finite is written as null (JSON has no inf or nan;
// a figure that could not be measured is null, never a bogus number), and
// text that is not valid UTF-8 gets U+FFFD instead of making the writer
// throw. Header-only, so that tools that do not link lib/common can write
// the same way.
//
// Reading: parse_json_object() and the typed lookups fail with
// TM_ERROR_INVALID_ARGUMENT naming the key or the column at fault.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainmover {

using Json = nlohmann::ordered_json;

inline std::string json_line(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// One JSON object (trailing "\r\n" allowed); fails saying where the text
// stops being JSON, or that it is not an object.
Result<Json> parse_json_object(std::string_view line);
// The number at `key`; fails naming the key when it is absent, null or not
// a number.
Result<double> json_number(const Json& object, const std::string& key);
// The string at `key`; nullopt when absent or not a string.
std::optional<std::string> json_string(const Json& object, const std::string& key);

}  // namespace trainmover
