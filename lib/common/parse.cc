#include "common/parse.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/str.h"

namespace trainmover {
namespace {

// Splits "16MiB" into a number part and a lowercase suffix.
std::pair<std::string, std::string> split_suffix(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  std::string suffix;
  for (char c : text.substr(i))
    suffix.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return {std::string(text.substr(0, i)), suffix};
}

Result<double> parse_number(const std::string& digits, std::string_view original) {
  if (digits.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "'", original, "' is not a number");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(digits.c_str(), &end);
  if (errno != 0 || end != digits.c_str() + digits.size() || !std::isfinite(v)) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", original, "' is not a number");
  }
  return v;
}

}  // namespace

Result<uint64_t> parse_size(std::string_view text) {
  auto [digits, suffix] = split_suffix(text);
  TM_ASSIGN_OR_RETURN(double value, parse_number(digits, text));
  double scale = 0;
  if (suffix.empty() || suffix == "b")
    scale = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib")
    scale = 1024.0;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib")
    scale = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib")
    scale = 1024.0 * 1024 * 1024;
  else
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "': unknown size unit '", suffix,
                 "' (use K, M or G)");
  double bytes = value * scale;
  if (bytes != std::floor(bytes) || bytes > 9.0e18) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is not a whole number of bytes");
  }
  return static_cast<uint64_t>(bytes);
}

Result<std::vector<uint64_t>> parse_size_list(std::string_view text) {
  std::vector<uint64_t> sizes;
  for (std::string_view field : split(text, ',')) {
    TM_ASSIGN_OR_RETURN(uint64_t size, parse_size(field));
    sizes.push_back(size);
  }
  return sizes;
}

Result<int64_t> parse_int(std::string_view text, int64_t min, int64_t max) {
  std::string s(text);
  if (s.empty())
    return error(TM_ERROR_INVALID_ARGUMENT, "empty value where an integer was expected");
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is not an integer");
  }
  if (v < min || v > max) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is out of range [", min, ", ", max, "]");
  }
  return static_cast<int64_t>(v);
}

Result<std::vector<int64_t>> parse_int_list(std::string_view text, int64_t min, int64_t max) {
  std::vector<int64_t> values;
  for (std::string_view field : split(text, ',')) {
    TM_ASSIGN_OR_RETURN(int64_t v, parse_int(field, min, max));
    values.push_back(v);
  }
  return values;
}

Result<double> parse_seconds(std::string_view text) {
  auto [digits, suffix] = split_suffix(text);
  TM_ASSIGN_OR_RETURN(double value, parse_number(digits, text));
  double scale = 0;
  if (suffix.empty() || suffix == "s")
    scale = 1;
  else if (suffix == "ms")
    scale = 1e-3;
  else if (suffix == "us")
    scale = 1e-6;
  else if (suffix == "m" || suffix == "min")
    scale = 60;
  else
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "': unknown time unit '", suffix,
                 "' (use ms, s or m)");
  return value * scale;
}

std::optional<std::string> get_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace trainmover
