// String building without iostream boilerplate at call sites.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace trainmover {

// Concatenates the stream representation of every argument.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

// Human-readable byte count: "512 B", "4 KiB", "1.5 MiB".
std::string format_bytes(double bytes);

// Splits `text` at `sep`; empty fields are kept.
std::vector<std::string_view> split(std::string_view text, char sep);

// `v` as 16 lower-case hex digits.
std::string hex64(uint64_t v);

// 64-bit FNV-1a: a stable name for a string (not a secure hash).
uint64_t fnv1a_64(std::string_view text);

}  // namespace trainmover
