// trainmover-trace: shows, checks and compares recorded collective traces
// (the files standbys replay in a sandbox; see trainmover(3)).
#include <cstdio>
#include <string_view>

#include "commands.h"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*main)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"show", "print a trace's header and its calls", trainmover::trace_tool::show_main},
    {"check", "verify traces (checksums, format, job, role)", trainmover::trace_tool::check_main},
    {"diff", "compare two traces call by call", trainmover::trace_tool::diff_main},
};

void print_help() {
  std::printf(
      "Usage: trainmover-trace SUBCOMMAND [OPTIONS] FILE...\n"
      "Inspect the collective traces TrainMover records for standbys.\n\nSubcommands:\n");
  for (const auto& sub : kSubcommands) std::printf("  %-8s %s\n", sub.name, sub.summary);
  std::printf(
      "\n'trainmover-trace SUBCOMMAND --help' describes a subcommand.\n"
      "Exit status: 0 fine, 1 a bad trace or a difference, 2 usage error or unreadable file.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "trainmover-trace: no subcommand given\nTry 'trainmover-trace --help'.\n");
    return trainmover::trace_tool::kExitUsage;
  }
  std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_help();
    return 0;
  }
  for (const auto& sub : kSubcommands) {
    if (first == sub.name) return sub.main(argc - 1, argv + 1);
  }
  std::fprintf(stderr,
               "trainmover-trace: unknown subcommand '%s'\nTry 'trainmover-trace --help'.\n",
               argv[1]);
  return trainmover::trace_tool::kExitUsage;
}
