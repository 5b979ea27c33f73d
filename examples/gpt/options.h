// The command line of trainmover-gpt, read with the project's one helper,
// cli::CommandLine (lib/cli): one table gives the options, their ranges and
// --help.
#pragma once

#include <optional>

#include "trainer.h"

namespace trainmover::gpt {

struct CommandLine {
  TrainOptions train;
  int dp = 1;
  int pp = 1;
  double warmup_wait_s = 10;  // a standby's wait for all roles' traces (warmup.h)
};

// Fills `out` from argv. Returns the exit status when the program should end
// there: 0 after --help, cli::kExitUsage (2) after a bad command line, whose
// message (on stderr, in the helper's one form) names the option or value;
// nullopt: go on and train.
std::optional<int> parse_command_line(int argc, const char* const* argv, CommandLine& out);

}  // namespace trainmover::gpt
