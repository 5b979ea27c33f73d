#include "common/json.h"

namespace trainmover {

Result<Json> parse_json_object(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  Json value;
  try {
    value = Json::parse(line);
  } catch (const Json::parse_error& e) {
    return error(TM_ERROR_INVALID_ARGUMENT, "bad JSON line: ", e.what(), " in: ", line);
  }
  if (!value.is_object())
    return error(TM_ERROR_INVALID_ARGUMENT, "bad JSON line: not an object: ", line);
  return value;
}

Result<double> json_number(const Json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end()) return error(TM_ERROR_INVALID_ARGUMENT, "JSON key '", key, "' missing");
  if (it->is_null()) {
    return error(TM_ERROR_INVALID_ARGUMENT, "JSON key '", key,
                 "' is null (the figure was not measured, or not finite)");
  }
  if (!it->is_number())
    return error(TM_ERROR_INVALID_ARGUMENT, "JSON key '", key, "' is not a number: ", it->dump());
  return it->get<double>();
}

std::optional<std::string> json_string(const Json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace trainmover
