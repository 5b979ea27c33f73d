#include "measured.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include "common/json.h"
#include "common/median.h"

namespace trainmover::sim {
namespace {

// Downtimes measured for one mode, by nranks.
using RowsByScale = std::map<double, std::vector<double>>;

// A measured figure: present, a number (null is what the bench writes for
// one that is not finite) and not negative.
Result<double> number_field(const Json& row, const std::string& key) {
  TM_ASSIGN_OR_RETURN(const double number, json_number(row, key));
  if (number < 0) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is negative");
  return number;
}

Result<std::string> string_field(const Json& row, const std::string& key) {
  std::optional<std::string> text = json_string(row, key);
  if (!text) return error(TM_ERROR_INVALID_ARGUMENT, "\"", key, "\" is missing or not a string");
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

// A row of `trainmover-bench recovery --json`: impl "trainmover" is a rank
// killed and recovered by TrainMover, an unexpected failure; its downtime_s
// is the pause of the job. The baselines' rows are not TrainMover's.
Status add_recovery_row(const Json& row, const std::string& impl, RowsByScale& unexpected) {
  if (impl != "trainmover") return Status::Ok();
  TM_ASSIGN_OR_RETURN(const double nranks, number_field(row, "nranks"));
  if (nranks < 1) return error(TM_ERROR_INVALID_ARGUMENT, "\"nranks\" must be at least 1");
  TM_ASSIGN_OR_RETURN(const double downtime, number_field(row, "downtime_s"));
  unexpected[nranks].push_back(downtime);
  return Status::Ok();
}

Status add_row(const Json& row, RowsByScale& planned, RowsByScale& unexpected) {
  TM_ASSIGN_OR_RETURN(const std::string impl, string_field(row, "impl"));
  if (impl == "trainmover" || impl == "stop-restart" || impl == "cold-standby")
    return add_recovery_row(row, impl, unexpected);
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

}  // namespace

Result<MeasuredDowntimes> read_measured_downtimes(std::istream& in, double planned_fallback_growth,
                                                  double unexpected_fallback_growth) {
  RowsByScale planned;
  RowsByScale unexpected;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto row = parse_json_object(line);
    Status added = row.ok() ? add_row(row.value(), planned, unexpected) : row.status();
    if (!added.ok()) return added.with_context(str_cat("line ", number));
  }
  TM_ASSIGN_OR_RETURN(LogLinear unexpected_line,
                      fit_mode(unexpected, "unexpected", unexpected_fallback_growth));
  // Recovery rows alone measure no planned migration: it is charged as the
  // failure (it never costs more, docs/simulator.md).
  if (planned.empty() && !unexpected.empty())
    return MeasuredDowntimes{unexpected_line, unexpected_line};
  TM_ASSIGN_OR_RETURN(LogLinear planned_line,
                      fit_mode(planned, "planned", planned_fallback_growth));
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
