// trainmover-trace's subcommands. Each returns the process exit code:
// 0 fine (diff: identical), 1 a trace is invalid or not the one asked for
// (diff: the traces differ), 2 a usage error or a file that cannot be read.
#pragma once

#include <cstdio>

namespace trainmover::trace_tool {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBad = 1;
inline constexpr int kExitUsage = 2;

int show_main(int argc, char** argv);
int check_main(int argc, char** argv);
int diff_main(int argc, char** argv);

}  // namespace trainmover::trace_tool
