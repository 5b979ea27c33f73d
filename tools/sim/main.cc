// trainmover-sim: projects ETTR and wasted GPU-hours at scales no test
// machine has. See man trainmover-sim and docs/simulator.md.
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

void LoadMeasured(tmsim::CliOptions& options) {
  if (options.measured_path.empty()) return;
  tmsim::PolicyParams& params = options.projection.params;
  params.measured = tmsim::ReadMeasuredDowntimesFile(options.measured_path,
                                                     params.trainmover_planned.per_doubling_s,
                                                     params.trainmover_unexpected.per_doubling_s);
}

void WritePlot(const tmsim::CliOptions& options, const std::vector<tmsim::ProjectionRow>& rows) {
  std::ofstream out(options.plot_path);
  if (!out) throw std::runtime_error("cannot write plot file '" + options.plot_path + "'");
  tmsim::WriteWastePlot(out, rows, "Wasted GPU-hours per week by recovery policy");
  if (!out.flush()) throw std::runtime_error("error writing plot file '" + options.plot_path + "'");
}

int Run(tmsim::CliOptions& options) {
  LoadMeasured(options);
  if (options.closed_form) {
    tmsim::WriteClosedFormCheck(std::cout, tmsim::CheckClosedForm(options.projection));
    return 0;
  }
  if (options.models) {
    tmsim::WriteModels(std::cout, options.projection);
    return 0;
  }
  const std::vector<tmsim::ProjectionRow> rows = tmsim::Project(options.projection);
  if (options.json) {
    tmsim::WriteJsonLines(std::cout, rows, options.projection.weeks);
  } else {
    tmsim::WriteTable(std::cout, rows, options.projection.weeks);
  }
  if (!options.plot_path.empty()) WritePlot(options, rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    tmsim::CliOptions options =
        tmsim::ParseOptions(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << tmsim::HelpText();
      return 0;
    }
    return Run(options);
  } catch (const tmsim::UsageError& error) {
    std::cerr << "trainmover-sim: " << error.what() << "\nTry 'trainmover-sim --help'.\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "trainmover-sim: " << error.what() << '\n';
    return 1;
  }
}
