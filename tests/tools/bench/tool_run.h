// Running trainmover-bench as a program from a test: bounded, with stdout
// and stderr captured, and its JSON lines parsed.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"

namespace trainmover::bench {

struct ToolRun {
  int status = -1;
  std::string out;  // stdout only
  std::string all;  // stdout then stderr
};

// Runs `trainmover-bench ARGS` (ARGS as a shell would split them).
ToolRun bench(const std::string& args, double timeout_s = 120);
// Runs the program at `path` the same way.
ToolRun run_program(const std::string& path, const std::string& args, double timeout_s = 120);

// A command line that must be refused, and a word the error must contain.
struct UsageCase {
  const char* args;
  const char* named;
};
// Expects exit status 2, the word on stderr and nothing on stdout, per case.
void expect_usage_errors(const std::vector<UsageCase>& cases);

// Expects `--help` of `args` (a subcommand, or "" for the program) to exit
// 0 and mention every one of `words`.
void expect_help_mentions(const std::string& args, const std::vector<std::string>& words);

// Every non-empty line of `out` as a JSON object; a line that does not parse
// fails the calling test.
std::vector<Json> json_lines(const std::string& out);

}  // namespace trainmover::bench
