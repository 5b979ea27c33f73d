// Command line of `trainmover-bench switch`: which modes, implementations
// and communicator sizes to measure, and how.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainmover::bench {

// How the process of the victim slot goes: at a planned switch it takes part
// up to the switch and then leaves; unexpectedly, it is killed (SIGKILL)
// while the others run collectives.
enum class SwitchMode { kPlanned, kUnexpected };
// How the survivors and the standby get a working ring again: the two-phase
// delta switch (only the links of the victim's slot change), or the full
// rebuild baseline (every communicator destroyed and created again).
enum class SwitchImpl { kDelta, kRebuild };

const char* mode_name(SwitchMode mode);
const char* impl_name(SwitchImpl impl);
// The inverses of mode_name and impl_name; false for any other name.
bool parse_mode_name(std::string_view name, SwitchMode& mode);
bool parse_impl_name(std::string_view name, SwitchImpl& impl);

struct SwitchOptions {
  std::vector<int> nranks = {4, 8, 16, 32, 64};
  std::vector<SwitchMode> modes = {SwitchMode::kPlanned};
  std::vector<SwitchImpl> impls = {SwitchImpl::kDelta, SwitchImpl::kRebuild};
  int victim = -1;  // -1: N/2 for each N
  uint64_t bytes = 4096;
  int warmup = 5;
  int rounds = 3;
  double timeout_s = 60;  // every wait of one round
  bool json = false;
  bool trace = false;  // per-process timestamps on stderr
  // The links the job's communicators open, from TRAINMOVER_ALGO and
  // TRAINMOVER_ALGO_THRESHOLDS (comm/algorithm.h): "ring" or "ring+doubling".
  std::string link_graph = "ring+doubling";

  int victim_for(int n) const { return victim >= 0 ? victim : n / 2; }
};

struct ParsedSwitch {
  SwitchOptions options;
  bool exit_now = false;
  int exit_code = 0;
};

// Parses argv after the subcommand name (argv[0] is "switch"). Errors are
// printed on stderr, naming the argument; they give exit_code 2.
ParsedSwitch parse_switch_options(int argc, char** argv);

}  // namespace trainmover::bench
