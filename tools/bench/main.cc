// trainmover-bench: measures TrainMover's collectives against peers on this
// host. A subcommand dispatcher: `allreduce`, `reduce_scatter`, `allgather`,
// `broadcast`, `switch`, `record`, `recovery` and `slurm-recovery`;
// `worker`, `switch-worker` and `record-worker` are the hidden modes in which
// the benchmark re-executes itself as the processes of a measured job.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "collective_cmd.h"
#include "record_cmd.h"
#include "record_worker.h"
#include "recovery_cmd.h"
#include "slurm_recovery_cmd.h"
#include "switch_cmd.h"
#include "switch_worker.h"
#include "worker.h"

namespace {

constexpr int kExitUsage = 2;

struct Subcommand {
  const char* name;
  const char* summary;  // nullptr: hidden from --help
  int (*main)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"allreduce", "float32 sum allreduce: trainmover vs gloo vs openmpi-tcp",
     trainmover::bench::collective_main},
    {"reduce_scatter", "float32 sum reduce_scatter: trainmover vs gloo vs openmpi-tcp",
     trainmover::bench::collective_main},
    {"allgather", "float32 allgather: trainmover vs gloo vs openmpi-tcp",
     trainmover::bench::collective_main},
    {"broadcast", "float32 broadcast from slot 0: trainmover vs gloo vs openmpi-tcp",
     trainmover::bench::collective_main},
    {"switch", "replace one process by a standby: delta switch vs full rebuild",
     trainmover::bench::switch_main},
    {"record", "cost of recording collectives for standbys, speed of replaying them",
     trainmover::bench::record_main},
    {"recovery", "the example job loses a rank: trainmover vs stop-restart vs cold standby",
     trainmover::bench::recovery_main},
    {"slurm-recovery", "the example job under srun loses a task or a node: trainmover vs Slurm",
     trainmover::bench::slurm_recovery_main},
    {"worker", nullptr, trainmover::bench::worker_main},
    {"switch-worker", nullptr, trainmover::bench::switch_worker_main},
    {"record-worker", nullptr, trainmover::bench::record_worker_main},
};

void print_help() {
  std::printf(
      "Usage: trainmover-bench SUBCOMMAND [OPTIONS]\n"
      "Benchmark TrainMover's collectives against other libraries on this host.\n\nSubcommands:\n");
  for (const auto& sub : kSubcommands) {
    if (sub.summary != nullptr) std::printf("  %-15s %s\n", sub.name, sub.summary);
  }
  std::printf("\n'trainmover-bench SUBCOMMAND --help' describes a subcommand's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "trainmover-bench: no subcommand given\nTry 'trainmover-bench --help'.\n");
    return kExitUsage;
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
               "trainmover-bench: unknown subcommand '%s'\nTry 'trainmover-bench --help'.\n",
               argv[1]);
  return kExitUsage;
}
