#include "collective_cmd.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "comm/config.h"
#include "job_runner.h"
#include "memcpy_bound.h"
#include "report.h"

namespace trainmover::bench {
namespace {

JobOutcome run_one(const std::string& impl, const CollectiveOptions& options,
                   const std::vector<SizePlan>& plan) {
  if (impl == kImplOpenmpiTcp || impl == kImplOpenmpiShm) return run_mpi_job(impl, options, plan);
  return run_worker_job(impl, options, plan);
}

// A one-line note; peers that cannot run are skipped, not fatal.
void note_failure(const std::string& impl, const JobFailure& failure) {
  std::fprintf(stderr, "trainmover-bench: %s %s: %s\n", impl.c_str(),
               failure.not_available ? "skipped" : "failed, skipped",
               failure.status.message().c_str());
}

// The algorithm policy of this process's environment: the trainmover ranks
// inherit it.
Result<AlgorithmPolicy> environment_policy() {
  tm_config_t config{};
  TM_RETURN_IF_ERROR(init_config(config));
  return algorithm_policy(config);
}

}  // namespace

int collective_main(int argc, char** argv) {
  ParsedCollective parsed = parse_collective_options(argc, argv);
  if (parsed.exit_now) return parsed.exit_code;
  const CollectiveOptions& options = parsed.options;
  // The trainmover ranks are this process's children and read it from there.
  setenv("TRAINMOVER_TRANSPORT", options.transport.c_str(), 1);
  std::vector<SizePlan> plan = plan_sizes(options);
  auto policy = environment_policy();
  if (!policy.ok()) {
    std::fprintf(stderr, "trainmover-bench: %s\n", policy.status().message().c_str());
    return 2;
  }
  CollectiveReport report(options, plan, policy.value());
  bool shared_memory =
      options.transport != "tcp" ||
      std::find(options.impls.begin(), options.impls.end(), kImplOpenmpiShm) != options.impls.end();
  if (shared_memory) report.set_memcpy_gbps(memcpy_gbps());
  std::set<std::string> dropped;
  bool trainmover_failed = false;
  // Interleaved: every impl once per round, so a noisy period hits all alike.
  for (int round = 0; round < options.rounds; ++round) {
    for (const std::string& impl : options.impls) {
      if (dropped.count(impl) != 0) continue;
      JobOutcome outcome = run_one(impl, options, plan);
      if (!outcome.ok()) {
        note_failure(impl, outcome.failure);
        dropped.insert(impl);
        trainmover_failed |= impl == kImplTrainmover;
        continue;
      }
      report.add_round(impl, outcome.times);
    }
  }
  if (options.json) {
    report.print_json();
  } else {
    report.print_table();
  }
  return trainmover_failed ? 1 : 0;
}

}  // namespace trainmover::bench
