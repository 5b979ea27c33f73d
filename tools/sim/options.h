// Command-line options of trainmover-sim, read by the shared option helper
// (lib/cli). Every number has a range in which the model means something and
// a run stays short; see trainmover-sim(1).
#pragma once

#include <optional>
#include <string>

#include "projection.h"

namespace trainmover::sim {

struct CliOptions {
  ProjectionConfig projection;
  bool json = false;
  bool closed_form = false;   // print the closed-form check instead
  bool models = false;        // print the resolved downtime models instead
  std::string plot_path;      // empty: no plot
  std::string measured_path;  // empty: no `measured` policy
};

// Parses argv[1..argc) into `options`. nullopt: run; otherwise the exit
// status, the help or the error (naming the option) already printed: 0
// after --help, 2 for a bad command line.
std::optional<int> parse_options(int argc, const char* const* argv, CliOptions& options);

// What --help prints.
std::string help_text();

}  // namespace trainmover::sim
