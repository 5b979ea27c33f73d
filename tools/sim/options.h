// Command-line options of trainmover-sim.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "projection.h"

namespace tmsim {

struct CliOptions {
  ProjectionConfig projection;
  bool json = false;
  bool help = false;
  bool closed_form = false;   // print the closed-form check instead
  bool models = false;        // print the resolved downtime models instead
  std::string plot_path;      // empty: no plot
  std::string measured_path;  // empty: no `measured` policy
};

// Thrown for bad arguments; what() names the option and the problem.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses argv[1..]. Options take "--name value" or "--name=value".
CliOptions ParseOptions(const std::vector<std::string>& args);

std::string HelpText();

}  // namespace tmsim
