// A parser for flat JSON objects (string, number, bool and null values, no
// nesting): enough for the JSON lines our bench tools print.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>

namespace tmsim {

using FlatValue = std::variant<std::monostate, bool, double, std::string>;
using FlatObject = std::map<std::string, FlatValue, std::less<>>;

// Throws std::runtime_error describing the first problem found.
FlatObject ParseFlatJsonObject(std::string_view text);

}  // namespace tmsim
