#include "measured.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include "common/median.h"
#include "flat_json.h"

namespace trainmover::sim {
namespace {

// The flat JSON reader is still in the simulator's old namespace.
using tmsim::FlatObject;
using tmsim::FlatValue;
using tmsim::ParseFlatJsonObject;

// Downtimes measured for one mode, by nranks.
using RowsByScale = std::map<double, std::vector<double>>;

Result<const FlatValue*> field(const FlatObject& row, std::string_view key) {
  const auto found = row.find(key);
  if (found == row.end()) return error(TM_ERROR_INVALID_ARGUMENT, "missing key \"", key, "\"");
  return &found->second;
}

Result<double> number_field(const FlatObject& row, std::string_view key) {
  TM_ASSIGN_OR_RETURN(const FlatValue* value, field(row, key));
  const auto* number = std::get_if<double>(value);
  if (number == nullptr) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is not a number");
  if (*number < 0) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is negative");
  return *number;
}

Result<std::string> string_field(const FlatObject& row, std::string_view key) {
  TM_ASSIGN_OR_RETURN(const FlatValue* value, field(row, key));
  const auto* text = std::get_if<std::string>(value);
  if (text == nullptr) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is not a string");
  return *text;
}

Result<LogLinear> fit_mode(const RowsByScale& rows, std::string_view mode, double fallback_growth) {
  if (rows.empty())
    return error(TM_ERROR_INVALID_ARGUMENT, "no \"delta\" rows with mode \"", mode, "\"");
  const auto largest = std::prev(rows.end());
  LogLinear line{largest->first, median(largest->second), fallback_growth};
  if (rows.size() >= 2) {
    const auto next = std::prev(largest);
    const LogLinear fitted =
        line_through(next->first, median(next->second), largest->first, line.seconds);
    line.per_doubling_s = std::max(0.0, fitted.per_doubling_s);
  }
  return line;
}

Status add_row(const FlatObject& row, RowsByScale& planned, RowsByScale& unexpected) {
  TM_ASSIGN_OR_RETURN(const std::string impl, string_field(row, "impl"));
  if (impl != "delta") return Status::Ok();
  TM_ASSIGN_OR_RETURN(const std::string mode, string_field(row, "mode"));
  TM_ASSIGN_OR_RETURN(const double nranks, number_field(row, "nranks"));
  if (nranks < 1) return error(TM_ERROR_INVALID_ARGUMENT, "\"nranks\" must be at least 1");
  TM_ASSIGN_OR_RETURN(const double switchover, number_field(row, "switchover_s"));
  TM_ASSIGN_OR_RETURN(const double first, number_field(row, "first_collective_s"));
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
Result<FlatObject> parse_row(const std::string& line) {
  try {
    return ParseFlatJsonObject(line);
  } catch (const std::runtime_error& e) {
    return error(TM_ERROR_INVALID_ARGUMENT, e.what());
  }
}

}  // namespace

Result<MeasuredDowntimes> read_measured_downtimes(std::istream& in, double planned_fallback_growth,
                                                  double unexpected_fallback_growth) {
  RowsByScale planned;
  RowsByScale unexpected;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto row = parse_row(line);
    Status added = row.ok() ? add_row(row.value(), planned, unexpected) : row.status();
    if (!added.ok()) return added.with_context(str_cat("line ", number));
  }
  TM_ASSIGN_OR_RETURN(LogLinear planned_line,
                      fit_mode(planned, "planned", planned_fallback_growth));
  TM_ASSIGN_OR_RETURN(LogLinear unexpected_line,
                      fit_mode(unexpected, "unexpected", unexpected_fallback_growth));
  return MeasuredDowntimes{planned_line, unexpected_line};
}

Result<MeasuredDowntimes> read_measured_downtimes_file(const std::string& path,
                                                       double planned_fallback_growth,
                                                       double unexpected_fallback_growth) {
  std::ifstream in(path);
  if (!in) return error(TM_ERROR_NOT_FOUND, "cannot open measured downtimes file '", path, "'");
  auto measured = read_measured_downtimes(in, planned_fallback_growth, unexpected_fallback_growth);
  if (!measured.ok()) return measured.status().with_context(path);
  return measured;
}

}  // namespace trainmover::sim
