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

Status LoadMeasured(tmsim::CliOptions& options) {
  if (options.measured_path.empty()) return Status::Ok();
  tmsim::PolicyParams& params = options.projection.params;
  TM_ASSIGN_OR_RETURN(params.measured,
                      tmsim::ReadMeasuredDowntimesFile(options.measured_path,
                                                       params.trainmover_planned.per_doubling_s,
                                                       params.trainmover_unexpected.per_doubling_s));
  return Status::Ok();
}

Status WritePlot(const tmsim::CliOptions& options, const std::vector<tmsim::ProjectionRow>& rows) {
  std::ofstream out(options.plot_path);
  if (!out)
    return trainmover::error(TM_ERROR_SYSTEM, "cannot write plot file '", options.plot_path, "'");
  tmsim::WriteWastePlot(out, rows, "Wasted GPU-hours per week by recovery policy");
  if (!out.flush())
    return trainmover::error(TM_ERROR_SYSTEM, "error writing plot file '", options.plot_path, "'");
  return Status::Ok();
}

Status Run(tmsim::CliOptions& options) {
  TM_RETURN_IF_ERROR(LoadMeasured(options));
  if (options.closed_form) {
    TM_ASSIGN_OR_RETURN(auto rows, tmsim::CheckClosedForm(options.projection));
    tmsim::WriteClosedFormCheck(std::cout, rows);
    return Status::Ok();
  }
  if (options.models) return tmsim::WriteModels(std::cout, options.projection);
  TM_ASSIGN_OR_RETURN(const std::vector<tmsim::ProjectionRow> rows,
                      tmsim::Project(options.projection));
  if (options.json) {
    tmsim::WriteJsonLines(std::cout, rows, options.projection.weeks);
  } else {
    tmsim::WriteTable(std::cout, rows, options.projection.weeks);
  }
  if (!options.plot_path.empty()) return WritePlot(options, rows);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  tmsim::CliOptions options;
  if (auto exit_code = tmsim::ParseOptions(argc, argv, options)) return *exit_code;
  Status status = Run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "trainmover-sim: %s\n", status.message().c_str());
    return kExitFailed;
  }
  return 0;
}
