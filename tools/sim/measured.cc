#include "measured.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include "common/median.h"
#include "flat_json.h"

namespace tmsim {
namespace {

using trainmover::Result;
using trainmover::Status;
using trainmover::error;

// Downtimes measured for one mode, by nranks.
using RowsByScale = std::map<double, std::vector<double>>;

Result<const FlatValue*> Field(const FlatObject& row, std::string_view key) {
  const auto found = row.find(key);
  if (found == row.end()) return error(TM_ERROR_INVALID_ARGUMENT, "missing key \"", key, "\"");
  return &found->second;
}

Result<double> NumberField(const FlatObject& row, std::string_view key) {
  TM_ASSIGN_OR_RETURN(const FlatValue* value, Field(row, key));
  const auto* number = std::get_if<double>(value);
  if (number == nullptr) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is not a number");
  if (*number < 0) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is negative");
  return *number;
}

Result<std::string> StringField(const FlatObject& row, std::string_view key) {
  TM_ASSIGN_OR_RETURN(const FlatValue* value, Field(row, key));
  const auto* text = std::get_if<std::string>(value);
  if (text == nullptr) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is not a string");
  return *text;
}

Result<LogLinear> FitMode(const RowsByScale& rows, std::string_view mode, double fallback_growth) {
  if (rows.empty())
    return error(TM_ERROR_INVALID_ARGUMENT, "no \"delta\" rows with mode \"", mode, "\"");
  const auto largest = std::prev(rows.end());
  LogLinear line{largest->first, trainmover::median(largest->second), fallback_growth};
  if (rows.size() >= 2) {
    const auto next = std::prev(largest);
    const LogLinear fitted =
        LineThrough(next->first, trainmover::median(next->second), largest->first, line.seconds);
    line.per_doubling_s = std::max(0.0, fitted.per_doubling_s);
  }
  return line;
}

Status AddRow(const FlatObject& row, RowsByScale& planned, RowsByScale& unexpected) {
  TM_ASSIGN_OR_RETURN(const std::string impl, StringField(row, "impl"));
  if (impl != "delta") return Status::Ok();
  TM_ASSIGN_OR_RETURN(const std::string mode, StringField(row, "mode"));
  TM_ASSIGN_OR_RETURN(const double nranks, NumberField(row, "nranks"));
  if (nranks < 1) return error(TM_ERROR_INVALID_ARGUMENT, "\"nranks\" must be at least 1");
  TM_ASSIGN_OR_RETURN(const double switchover, NumberField(row, "switchover_s"));
  TM_ASSIGN_OR_RETURN(const double first, NumberField(row, "first_collective_s"));
  if (mode == "planned") {
    planned[nranks].push_back(switchover + first);
  } else if (mode == "unexpected") {
    unexpected[nranks].push_back(switchover + first);
  } else {
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "\"mode\" must be \"planned\" or \"unexpected\", not \"", mode, "\"");
  }
  return Status::Ok();
}

// The flat JSON parser reports by exception; this is the one place it is caught.
Result<FlatObject> ParseRow(const std::string& line) {
  try {
    return ParseFlatJsonObject(line);
  } catch (const std::runtime_error& e) {
    return error(TM_ERROR_INVALID_ARGUMENT, e.what());
  }
}

}  // namespace

Result<MeasuredDowntimes> ReadMeasuredDowntimes(std::istream& in, double planned_fallback_growth,
                                                double unexpected_fallback_growth) {
  RowsByScale planned;
  RowsByScale unexpected;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto row = ParseRow(line);
    Status added = row.ok() ? AddRow(row.value(), planned, unexpected) : row.status();
    if (!added.ok()) return added.with_context(trainmover::str_cat("line ", number));
  }
  TM_ASSIGN_OR_RETURN(LogLinear planned_line,
                      FitMode(planned, "planned", planned_fallback_growth));
  TM_ASSIGN_OR_RETURN(LogLinear unexpected_line,
                      FitMode(unexpected, "unexpected", unexpected_fallback_growth));
  return MeasuredDowntimes{planned_line, unexpected_line};
}

Result<MeasuredDowntimes> ReadMeasuredDowntimesFile(const std::string& path,
                                                    double planned_fallback_growth,
                                                    double unexpected_fallback_growth) {
  std::ifstream in(path);
  if (!in)
    return error(TM_ERROR_NOT_FOUND, "cannot open measured downtimes file '", path, "'");
  auto measured = ReadMeasuredDowntimes(in, planned_fallback_growth, unexpected_fallback_growth);
  if (!measured.ok()) return measured.status().with_context(path);
  return measured;
}

}  // namespace tmsim
