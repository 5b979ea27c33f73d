// The command line of trainmover-gpt, through Boost.Program_options.
#pragma once

#include <string>

#include "common/status.h"
#include "trainer.h"

namespace trainmover::gpt {

struct CommandLine {
  TrainOptions train;
  int dp = 1;
  int pp = 1;
  bool help = false;
  std::string help_text;  // set when help is
};

// Fails with a message naming the bad option or value.
Result<CommandLine> parse_command_line(int argc, const char* const* argv);

}  // namespace trainmover::gpt
