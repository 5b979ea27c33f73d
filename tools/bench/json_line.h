// One-line flat JSON objects: what the benchmark workers print and what
// `trainmover-bench --json` prints. Only what we need: string and number
// values, no nesting, keys in insertion order.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainmover::bench {

class JsonLine {
 public:
  JsonLine& add(const std::string& key, const std::string& value);
  JsonLine& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  JsonLine& add(const std::string& key, double value);
  JsonLine& add(const std::string& key, long long value);
  JsonLine& add(const std::string& key, int value) {
    return add(key, static_cast<long long>(value));
  }
  JsonLine& add(const std::string& key, unsigned long long value) {
    return add(key, static_cast<long long>(value));
  }
  JsonLine& add(const std::string& key, unsigned long value) {
    return add(key, static_cast<long long>(value));
  }
  // "{"k":v,...}" without a newline.
  std::string str() const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;  // values already encoded
};

// A parsed flat object: every value kept as text (strings unquoted).
class JsonObject {
 public:
  static Result<JsonObject> parse(std::string_view line);
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::optional<std::string> string(const std::string& key) const;
  // The value as a number; fails naming the key when absent or not numeric.
  Result<double> number(const std::string& key) const;

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace trainmover::bench
