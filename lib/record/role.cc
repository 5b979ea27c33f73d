#include "record/role.h"

#include <algorithm>

namespace trainmover::record {
namespace {

bool key_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

bool value_char(char c) { return key_char(c) || (c >= 'A' && c <= 'Z') || c == '.' || c == '-'; }

bool all_of(std::string_view text, bool (*ok)(char)) {
  return std::all_of(text.begin(), text.end(), ok);
}

}  // namespace

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::kNone:
      return "none";
    case Stage::kFirst:
      return "first";
    case Stage::kMiddle:
      return "middle";
    case Stage::kLast:
      return "last";
  }
  return "invalid";
}

Result<Stage> parse_stage(std::string_view text) {
  for (Stage s : {Stage::kNone, Stage::kFirst, Stage::kMiddle, Stage::kLast}) {
    if (text == stage_name(s)) return s;
  }
  return error(TM_ERROR_INVALID_ARGUMENT, "pipeline stage '", text,
               "' is not one of none, first, middle, last");
}

Status Role::set_attribute(std::string_view key, std::string_view value) {
  if (key.empty() || key.size() > 32 || !all_of(key, key_char)) {
    return error(TM_ERROR_INVALID_ARGUMENT, "role attribute key '", key,
                 "' must have 1 to 32 characters of [a-z0-9_]");
  }
  if (key == "stage") {
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "role attribute key 'stage' is reserved: declare the stage itself");
  }
  if (value.empty() || value.size() > 64 || !all_of(value, value_char)) {
    return error(TM_ERROR_INVALID_ARGUMENT, "role attribute ", key, "='", value,
                 "': the value must have 1 to 64 characters of [A-Za-z0-9_.-]");
  }
  Role candidate = *this;
  candidate.attributes[std::string(key)] = std::string(value);
  if (candidate.canonical().size() > kMaxRoleText) {
    return error(TM_ERROR_INVALID_ARGUMENT, "role '", candidate.canonical(), "' is longer than ",
                 kMaxRoleText, " characters");
  }
  attributes = std::move(candidate.attributes);
  return Status::Ok();
}

std::string Role::canonical() const {
  std::string text = str_cat("stage=", stage_name(stage));
  for (const auto& [key, value] : attributes) text += str_cat(",", key, "=", value);
  return text;
}

std::string Role::file_name() const { return canonical() + ".tmtrace"; }

Result<Role> Role::parse(std::string_view text) {
  Role role;
  if (text.empty()) return role;
  bool have_stage = false;
  for (std::string_view field : split(text, ',')) {
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) {
      return error(TM_ERROR_INVALID_ARGUMENT, "role '", text, "': field '", field,
                   "' is not key=value");
    }
    std::string_view key = field.substr(0, eq);
    std::string_view value = field.substr(eq + 1);
    bool duplicate = key == "stage" ? have_stage : role.attributes.count(std::string(key)) > 0;
    if (duplicate) {
      return error(TM_ERROR_INVALID_ARGUMENT, "role '", text, "': '", key, "' appears twice");
    }
    if (key == "stage") {
      TM_ASSIGN_OR_RETURN(role.stage, parse_stage(value));
      have_stage = true;
    } else {
      TM_RETURN_IF_ERROR(role.set_attribute(key, value).with_context(str_cat("role '", text, "'")));
    }
  }
  return role;
}

}  // namespace trainmover::record
