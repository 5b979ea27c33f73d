#include "switch_cmd.h"

#include <cstdio>

#include "switch_metrics.h"
#include "switch_options.h"
#include "switch_report.h"
#include "switch_round.h"

namespace trainmover::bench {
namespace {

constexpr int kExitFailed = 1;

SwitchRoundPlan round_plan(const SwitchOptions& options, SwitchMode mode, SwitchImpl impl, int n) {
  SwitchRoundPlan plan;
  plan.mode = mode;
  plan.impl = impl;
  plan.nranks = n;
  plan.victim = options.victim_for(n);
  plan.bytes = options.bytes;
  plan.warmup = options.warmup;
  plan.timeout_s = options.timeout_s;
  plan.trace = options.trace;
  return plan;
}

Result<SwitchMetrics> measure(const SwitchOptions& options, const SwitchRoundPlan& plan) {
  TM_ASSIGN_OR_RETURN(SwitchRecord record, run_switch_round(plan));
  if (options.trace) print_switch_trace(plan, record);
  return compute_switch_metrics(plan, record);
}

}  // namespace

int switch_main(int argc, char** argv) {
  ParsedSwitch parsed = parse_switch_options(argc, argv);
  if (parsed.exit_now) return parsed.exit_code;
  const SwitchOptions& options = parsed.options;
  SwitchReport report(options);
  for (SwitchMode mode : options.modes) {
    for (int n : options.nranks) {
      // Interleaved: both implementations in every round, so a noisy period
      // of the machine hits both alike.
      for (int round = 0; round < options.rounds; ++round) {
        for (SwitchImpl impl : options.impls) {
          SwitchRoundPlan plan = round_plan(options, mode, impl, n);
          auto metrics = measure(options, plan);
          if (!metrics.ok()) {
            std::fprintf(stderr, "trainmover-bench switch: %s %s N=%d round %d: %s\n",
                         mode_name(mode), impl_name(impl), n, round + 1,
                         metrics.status().message().c_str());
            return kExitFailed;
          }
          report.add_round(mode, impl, n, metrics.value());
        }
      }
    }
  }
  if (options.json) {
    report.print_json();
  } else {
    report.print_table();
  }
  return 0;
}

}  // namespace trainmover::bench
