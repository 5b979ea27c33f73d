// trainmover-sim: projects ETTR and wasted GPU-hours at scales no test
// machine has. See man trainmover-sim and docs/simulator.md.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "closed_form_check.h"
#include "measured.h"
#include "options.h"
#include "projection.h"
#include "report.h"
#include "svg_plot.h"

namespace {

using trainmover::Status;

constexpr int kExitFailed = 1;

Status load_measured(trainmover::sim::CliOptions& options) {
  if (options.measured_path.empty()) return Status::Ok();
  trainmover::sim::PolicyParams& params = options.projection.params;
  TM_ASSIGN_OR_RETURN(params.measured,
                      trainmover::sim::read_measured_downtimes_file(
                          options.measured_path, params.trainmover_planned.per_doubling_s,
                          params.trainmover_unexpected.per_doubling_s));
  return Status::Ok();
}

Status write_plot(const trainmover::sim::CliOptions& options,
                  const std::vector<trainmover::sim::ProjectionRow>& rows) {
  std::ofstream out(options.plot_path);
  if (!out)
    return trainmover::error(TM_ERROR_SYSTEM, "cannot write plot file '", options.plot_path, "'");
  trainmover::sim::write_waste_plot(out, rows, "Wasted GPU-hours per week by recovery policy");
  if (!out.flush())
    return trainmover::error(TM_ERROR_SYSTEM, "error writing plot file '", options.plot_path, "'");
  return Status::Ok();
}

Status run(trainmover::sim::CliOptions& options) {
  TM_RETURN_IF_ERROR(load_measured(options));
  if (options.closed_form) {
    TM_ASSIGN_OR_RETURN(auto rows, trainmover::sim::check_closed_form(options.projection));
    trainmover::sim::write_closed_form_check(std::cout, rows);
    return Status::Ok();
  }
  if (options.models) return trainmover::sim::write_models(std::cout, options.projection);
  TM_ASSIGN_OR_RETURN(const std::vector<trainmover::sim::ProjectionRow> rows,
                      trainmover::sim::project(options.projection));
  if (options.json) {
    trainmover::sim::write_json_lines(std::cout, rows, options.projection.weeks);
  } else {
    trainmover::sim::write_table(std::cout, rows, options.projection.weeks);
  }
  if (!options.plot_path.empty()) return write_plot(options, rows);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  trainmover::sim::CliOptions options;
  if (auto exit_code = trainmover::sim::parse_options(argc, argv, options)) return *exit_code;
  Status status = run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "trainmover-sim: %s\n", status.message().c_str());
    return kExitFailed;
  }
  return 0;
}
