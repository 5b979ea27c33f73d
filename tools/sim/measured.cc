#include "measured.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include "common/json.h"

namespace tmsim {
namespace {

// Downtimes measured for one mode, by nranks.
using RowsByScale = std::map<double, std::vector<double>>;

using trainmover::Json;

Json ParseRow(const std::string& line) {
  Json row;
  try {
    row = Json::parse(line);
  } catch (const Json::parse_error& error) {
    throw std::runtime_error(std::string("not JSON: ") + error.what());
  }
  if (!row.is_object()) throw std::runtime_error("not a JSON object");
  return row;
}

const Json& Field(const Json& row, const std::string& key) {
  const auto found = row.find(key);
  if (found == row.end()) throw std::runtime_error("missing key \"" + key + "\"");
  return *found;
}

// null is what the bench writes for a figure that is not finite.
double NumberField(const Json& row, const std::string& key) {
  const Json& value = Field(row, key);
  if (value.is_null())
    throw std::runtime_error("\"" + key + "\" is null (not measured, or not finite)");
  if (!value.is_number()) throw std::runtime_error("\"" + key + "\" is not a number");
  const double number = value.get<double>();
  if (number < 0) throw std::runtime_error("\"" + key + "\" is negative");
  return number;
}

std::string StringField(const Json& row, const std::string& key) {
  const Json& value = Field(row, key);
  if (!value.is_string()) throw std::runtime_error("\"" + key + "\" is not a string");
  return value.get<std::string>();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

LogLinear FitMode(const RowsByScale& rows, std::string_view mode, double fallback_growth) {
  if (rows.empty()) {
    throw std::runtime_error("no \"delta\" rows with mode \"" + std::string(mode) + "\"");
  }
  const auto largest = std::prev(rows.end());
  LogLinear line{largest->first, Median(largest->second), fallback_growth};
  if (rows.size() >= 2) {
    const auto next = std::prev(largest);
    const LogLinear fitted =
        LineThrough(next->first, Median(next->second), largest->first, line.seconds);
    line.per_doubling_s = std::max(0.0, fitted.per_doubling_s);
  }
  return line;
}

void AddRow(const Json& row, RowsByScale& planned, RowsByScale& unexpected) {
  if (StringField(row, "impl") != "delta") return;
  const std::string mode = StringField(row, "mode");
  const double nranks = NumberField(row, "nranks");
  if (nranks < 1) throw std::runtime_error("\"nranks\" must be at least 1");
  const double downtime = NumberField(row, "switchover_s") + NumberField(row, "first_collective_s");
  if (mode == "planned") {
    planned[nranks].push_back(downtime);
  } else if (mode == "unexpected") {
    unexpected[nranks].push_back(downtime);
  } else {
    throw std::runtime_error("\"mode\" must be \"planned\" or \"unexpected\", not \"" + mode +
                             "\"");
  }
}

}  // namespace

MeasuredDowntimes ReadMeasuredDowntimes(std::istream& in, double planned_fallback_growth,
                                        double unexpected_fallback_growth) {
  RowsByScale planned;
  RowsByScale unexpected;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      AddRow(ParseRow(line), planned, unexpected);
    } catch (const std::runtime_error& error) {
      throw std::runtime_error("line " + std::to_string(number) + ": " + error.what());
    }
  }
  return MeasuredDowntimes{FitMode(planned, "planned", planned_fallback_growth),
                           FitMode(unexpected, "unexpected", unexpected_fallback_growth)};
}

MeasuredDowntimes ReadMeasuredDowntimesFile(const std::string& path, double planned_fallback_growth,
                                            double unexpected_fallback_growth) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open measured downtimes file '" + path + "'");
  try {
    return ReadMeasuredDowntimes(in, planned_fallback_growth, unexpected_fallback_growth);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(path + ": " + error.what());
  }
}

}  // namespace tmsim
