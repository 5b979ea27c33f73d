#include "options.h"

#include <algorithm>

#include "cli/command_line.h"
#include "common/parse.h"

namespace trainmover::sim {
namespace {

using trainmover::cli::CommandLine;

constexpr int64_t kMaxGpus = int64_t{1} << 24;
constexpr double kMaxWeeks = 520;          // ten years
constexpr double kMaxMinutes = 1e6;        // about two years
constexpr double kMaxSeconds = 1e7;        // about four months
constexpr double kMaxUsdPerGpuHour = 1e4;  // keeps every cost finite

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (PolicyKind kind : all_policies()) names.emplace_back(policy_name(kind));
  return names;
}

std::vector<PolicyKind> default_policies(bool with_measured) {
  std::vector<PolicyKind> kinds;
  for (PolicyKind kind : all_policies()) {
    if (kind != PolicyKind::kMeasured || with_measured) kinds.push_back(kind);
  }
  return kinds;
}

// What the command line gives before it is turned into a ProjectionConfig:
// minutes where the model wants seconds, integers where it wants doubles.
struct Given {
  std::vector<int64_t> gpus = {1024, 8192, 16384, 65536, 131072};
  std::vector<std::string> policies;
  int64_t seed = 1;
  double rebalance_every_min = 0;
  double infra_min = 2;
  double straggler_detect_min = 10;
  double standby_replenish_min = 10;
};

void add_run_options(CommandLine& cl, CliOptions& o, Given& g) {
  ProjectionConfig& p = o.projection;
  cl.section("Scale and run")
      .integer_list("gpus", "LIST", 1, kMaxGpus, g.gpus,
                    "job sizes, comma-separated (default 1024,8192,16384,65536,131072)")
      .number("weeks", "W", 1e-3, kMaxWeeks, p.weeks,
              "simulated period per replication, up to 520 (default 1)")
      .integer("seed", "N", 0, int64_t{1} << 62, g.seed,
               "random seed; same seed, same output (default 1)")
      .integer("replications", "R", 2, 100000, p.replications,
               "independent replications for the 95% CI, >= 2 (default 10)")
      .choice_list("policies", "LIST", policy_names(), g.policies,
                   "checkpoint-restart, oobleck, parcae, torchft, trainmover, "
                   "trainmover-nostandby, measured (default: all; measured only with --measured)");
}

void add_event_options(CommandLine& cl, CliOptions& o, Given& g) {
  ProjectionConfig& p = o.projection;
  cl.section("Failures and events")
      .number("mttf-hours", "H", 0.01, 1e6, p.mttf.fixed_mttf_hours,
              "fixed job MTTF at every scale, 0.01 to 1e6 (default: power law through 7.9 h at "
              "1,024 and 1.8 h at 16,384 GPUs)")
      .number("planned-ratio", "R", 0, 100, p.planned_per_unexpected,
              "planned maintenance events per unexpected failure, 0 to 100 (default 47/419, "
              "Llama 3)")
      .number("rebalance-every", "MIN", 1, kMaxMinutes, g.rebalance_every_min,
              "planned rebalancing every MIN minutes, at least 1 (default: off)")
      .number("stragglers-per-day", "N", 0, 1000, p.stragglers.per_day_at_16k,
              "stragglers per day at 16,384 GPUs, scaled with G, up to 1000 (default 0)")
      .number("straggler-slowdown", "F", 0, 1, p.stragglers.slowdown,
              "throughput lost while a straggler runs, 0..1, below 1 (default 0.3)")
      .number("straggler-detect-min", "M", 0, kMaxMinutes, g.straggler_detect_min,
              "minutes until a straggler is found and removed (default 10)")
      .number("infra-min", "M", 0, kMaxMinutes, g.infra_min,
              "infrastructure cost per interruption, minutes (default 2)");
}

void add_policy_options(CommandLine& cl, CliOptions& o, Given& g) {
  PolicyParams& params = o.projection.params;
  cl.section("Policies")
      .integer("standbys", "N", 0, 100000, params.standbys,
               "standby machines for trainmover (default 1)")
      .number("standby-replenish-min", "M", 0, kMaxMinutes, g.standby_replenish_min,
              "minutes until a used standby is replaced (default 10)")
      .number("checkpoint-save-s", "S", 1e-3, kMaxSeconds, params.checkpoint_save_s,
              "blocking checkpoint save, checkpoint-restart (default 45)")
      .number("step-s", "S", 0, kMaxSeconds, params.step_s,
              "training step: work lost per failure without checkpoints (default 10)")
      .text("measured", "FILE", o.measured_path,
            "JSON lines from `trainmover-bench switch --json`");
}

void add_output_options(CommandLine& cl, CliOptions& o) {
  cl.section("Output")
      .flag("json", o.json, "one JSON object per line instead of the table")
      .flag("closed-form", o.closed_form,
            "check checkpoint-restart (failures only) against the closed-form ETTR at each "
            "scale, then exit")
      .flag("models", o.models, "print each policy's downtime per event at each scale, then exit")
      .text("plot", "FILE", o.plot_path, "write an SVG plot of wasted GPU-hours against scale")
      .number("price", "USD", 0, kMaxUsdPerGpuHour, o.projection.usd_per_gpu_hour,
              "cost of one GPU-hour, up to 10000 (default 2.00)");
}

CommandLine sim_command_line(CliOptions& o, Given& g) {
  CommandLine cl("trainmover-sim", "trainmover-sim [OPTIONS]",
                 "\nProjects the effective training time ratio (ETTR), wasted GPU-hours per week\n"
                 "and their cost for one training job under each recovery policy, by\n"
                 "discrete-event simulation. Defaults and their sources: docs/simulator.md.\n");
  add_run_options(cl, o, g);
  add_event_options(cl, o, g);
  add_policy_options(cl, o, g);
  add_output_options(cl, o);
  return cl;
}

void apply_given(const Given& g, CliOptions& o) {
  ProjectionConfig& p = o.projection;
  p.gpus.assign(g.gpus.begin(), g.gpus.end());
  p.seed = static_cast<std::uint64_t>(g.seed);
  p.rebalance_every_s = g.rebalance_every_min * 60;
  p.infra_s = g.infra_min * 60;
  p.stragglers.detect_s = g.straggler_detect_min * 60;
  p.params.standby_replenish_s = g.standby_replenish_min * 60;
  if (g.policies.empty()) {
    p.policies = default_policies(!o.measured_path.empty());
    return;
  }
  p.policies.clear();
  for (const std::string& name : g.policies) p.policies.push_back(*policy_from_name(name));
}

}  // namespace

std::optional<int> parse_options(int argc, const char* const* argv, CliOptions& options) {
  Given given;
  CommandLine cl = sim_command_line(options, given);
  if (std::optional<int> exit_code = cl.parse(argc, argv)) return exit_code;
  apply_given(given, options);
  const auto& policies = options.projection.policies;
  const bool wants_measured =
      std::find(policies.begin(), policies.end(), PolicyKind::kMeasured) != policies.end();
  if (wants_measured && options.measured_path.empty())
    return cl.usage_error("--policies: policy 'measured' needs --measured FILE");
  if (options.projection.stragglers.slowdown >= 1)
    return cl.usage_error("--straggler-slowdown: 1 is out of range: it must be below 1");
  if (Status size = check_run_size(options.projection); !size.ok())
    return cl.usage_error(size.message());
  return std::nullopt;
}

std::string help_text() {
  CliOptions options;
  Given given;
  return sim_command_line(options, given).help();
}

}  // namespace trainmover::sim
