// Command line of `trainmover-bench allreduce`, `reduce_scatter`,
// `allgather` and `broadcast` (one set of options; the subcommand names the
// collective) and the per-size plan derived from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collective.h"
#include "common/status.h"

namespace trainmover::bench {

// The implementations measured; the names are the `impl` keys of the output.
inline constexpr const char* kImplTrainmover = "trainmover";
inline constexpr const char* kImplGloo = "gloo";
inline constexpr const char* kImplOpenmpiTcp = "openmpi-tcp";
// OpenMPI over its shared-memory BTL (vader): the peer of trainmover's shm
// transport (--transport shm). Not in the default list.
inline constexpr const char* kImplOpenmpiShm = "openmpi-shm";

struct CollectiveOptions {
  Collective op = Collective::kAllreduce;
  int nranks = 4;
  std::vector<uint64_t> bytes = {4096, 65536, 1 << 20, 16 << 20, 64 << 20};
  int iters = 20;
  int warmup = 5;
  int rounds = 3;
  // A size gets at most max(1, max_volume / bytes) timed iterations, so the
  // large sizes do not dominate the run time on a small machine.
  uint64_t max_volume = 512ull << 20;
  std::vector<std::string> impls = {kImplTrainmover, kImplGloo, kImplOpenmpiTcp};
  // The trainmover ranks' TRAINMOVER_TRANSPORT: auto, tcp or shm.
  std::string transport = "auto";
  bool json = false;
  double job_timeout_s = 600;  // one job (one impl, one round, every size)
};

// One measured size: how many iterations it gets.
struct SizePlan {
  uint64_t bytes = 0;
  int iters = 0;
  int warmup = 0;
};

// Outcome of parsing: run, or exit with `exit_code` (0 after --help).
struct ParsedCollective {
  CollectiveOptions options;
  bool exit_now = false;
  int exit_code = 0;
};

// Parses argv from the subcommand on (argv[0] is the collective's name, as
// collective_name() spells it). Errors are printed on stderr, naming the
// argument; they give exit_code 2.
ParsedCollective parse_collective_options(int argc, char** argv);

std::vector<SizePlan> plan_sizes(const CollectiveOptions& options);

// The plan on a worker's command line: "bytes:iters:warmup,...".
std::string format_plan(const std::vector<SizePlan>& plans);
// The plan as the OpenMPI peer reads it: [[bytes, iters, warmup], ...].
std::string format_plan_json(const std::vector<SizePlan>& plans);
Result<std::vector<SizePlan>> parse_plan(std::string_view text);

}  // namespace trainmover::bench
