#include "options.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

namespace tmsim {
namespace {

constexpr double kMaxGpus = 1 << 24;

double ParseNumber(const std::string& option, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || !std::isfinite(value)) {
    throw UsageError(option + ": '" + text + "' is not a number");
  }
  return value;
}

double ParseAtLeast(const std::string& option, const std::string& text, double low) {
  const double value = ParseNumber(option, text);
  if (value < low) {
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", low);
    throw UsageError(option + ": " + text + " is out of range (must be at least " + bound + ")");
  }
  return value;
}

double ParsePositive(const std::string& option, const std::string& text) {
  const double value = ParseNumber(option, text);
  if (value <= 0) throw UsageError(option + ": " + text + " must be greater than zero");
  return value;
}

long ParseInteger(const std::string& option, const std::string& text, long low, long high) {
  long value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) {
    throw UsageError(option + ": '" + text + "' is not a whole number");
  }
  if (value < low || value > high) {
    throw UsageError(option + ": " + text + " is out of range [" + std::to_string(low) + ", " +
                     std::to_string(high) + "]");
  }
  return value;
}

std::vector<std::string> SplitCommas(const std::string& option, const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (items.back().empty()) throw UsageError(option + ": empty item in '" + text + "'");
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::vector<double> ParseGpuList(const std::string& option, const std::string& text) {
  std::vector<double> gpus;
  for (const std::string& item : SplitCommas(option, text)) {
    gpus.push_back(static_cast<double>(ParseInteger(option, item, 1, static_cast<long>(kMaxGpus))));
  }
  return gpus;
}

std::vector<PolicyKind> ParsePolicyList(const std::string& option, const std::string& text) {
  std::vector<PolicyKind> kinds;
  for (const std::string& item : SplitCommas(option, text)) {
    const std::optional<PolicyKind> kind = PolicyFromName(item);
    if (!kind) {
      throw UsageError(option + ": unknown policy '" + item +
                       "' (known: checkpoint-restart, oobleck, parcae, torchft, trainmover, "
                       "trainmover-nostandby, measured)");
    }
    kinds.push_back(*kind);
  }
  return kinds;
}

using Setter = std::function<void(CliOptions&, const std::string& option, const std::string&)>;

using Setters = std::map<std::string, Setter>;

// Scale, period, seed and policy selection.
void AddRunOptions(Setters& setters) {
  setters["--gpus"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.gpus = ParseGpuList(n, v);
  };
  setters["--weeks"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.weeks = ParsePositive(n, v);
  };
  setters["--seed"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.seed = static_cast<std::uint64_t>(ParseInteger(n, v, 0, 1L << 62));
  };
  setters["--replications"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.replications = static_cast<int>(ParseInteger(n, v, 2, 100000));
  };
  setters["--policies"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.policies = ParsePolicyList(n, v);
  };
}

// What interrupts the job.
void AddEventOptions(Setters& setters) {
  setters["--mttf-hours"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.mttf.fixed_mttf_hours = ParsePositive(n, v);
  };
  setters["--planned-ratio"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.planned_per_unexpected = ParseAtLeast(n, v, 0);
  };
  setters["--rebalance-every"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.rebalance_every_s = ParsePositive(n, v) * 60;
  };
  setters["--infra-min"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.infra_s = ParseAtLeast(n, v, 0) * 60;
  };
  setters["--stragglers-per-day"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.stragglers.per_day_at_16k = ParseAtLeast(n, v, 0);
  };
  setters["--straggler-slowdown"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    const double value = ParseAtLeast(n, v, 0);
    if (value >= 1) throw UsageError(n + ": " + v + " must be below 1");
    o.projection.stragglers.slowdown = value;
  };
  setters["--straggler-detect-min"] = [](CliOptions& o, const std::string& n,
                                         const std::string& v) {
    o.projection.stragglers.detect_s = ParseAtLeast(n, v, 0) * 60;
  };
}

// Recovery policy parameters.
void AddPolicyOptions(Setters& setters) {
  setters["--standbys"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.params.standbys = static_cast<int>(ParseInteger(n, v, 0, 100000));
  };
  setters["--standby-replenish-min"] = [](CliOptions& o, const std::string& n,
                                          const std::string& v) {
    o.projection.params.standby_replenish_s = ParseAtLeast(n, v, 0) * 60;
  };
  setters["--checkpoint-save-s"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.params.checkpoint_save_s = ParsePositive(n, v);
  };
  setters["--step-s"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.params.step_s = ParseAtLeast(n, v, 0);
  };
  setters["--measured"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    if (v.empty()) throw UsageError(n + ": needs a file name");
    o.measured_path = v;
  };
}

// Output.
void AddOutputOptions(Setters& setters) {
  setters["--price"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    o.projection.usd_per_gpu_hour = ParseAtLeast(n, v, 0);
  };
  setters["--plot"] = [](CliOptions& o, const std::string& n, const std::string& v) {
    if (v.empty()) throw UsageError(n + ": needs a file name");
    o.plot_path = v;
  };
}

Setters ValueOptions() {
  Setters setters;
  AddRunOptions(setters);
  AddEventOptions(setters);
  AddPolicyOptions(setters);
  AddOutputOptions(setters);
  return setters;
}

bool* FlagFor(CliOptions& options, const std::string& name) {
  if (name == "--json") return &options.json;
  if (name == "--models") return &options.models;
  if (name == "--closed-form") return &options.closed_form;
  return nullptr;
}

std::vector<PolicyKind> DefaultPolicies(bool with_measured) {
  std::vector<PolicyKind> kinds;
  for (PolicyKind kind : AllPolicies()) {
    if (kind != PolicyKind::kMeasured || with_measured) kinds.push_back(kind);
  }
  return kinds;
}

}  // namespace

CliOptions ParseOptions(const std::vector<std::string>& args) {
  CliOptions options;
  options.projection.gpus = {1024, 8192, 16384, 65536, 131072};
  bool policies_given = false;
  const Setters setters = ValueOptions();
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (const std::size_t eq = name.find('='); eq != std::string::npos && name.starts_with("--")) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "--help" || name == "-h") {
      options.help = true;
      continue;
    }
    if (bool* flag = FlagFor(options, name)) {
      if (value) throw UsageError(name + " takes no value");
      *flag = true;
      continue;
    }
    const auto setter = setters.find(name);
    if (setter == setters.end()) throw UsageError("unknown option '" + args[i] + "'");
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError(name + ": missing value");
      value = args[++i];
    }
    setter->second(options, name, *value);
    policies_given = policies_given || name == "--policies";
  }
  if (!policies_given)
    options.projection.policies = DefaultPolicies(!options.measured_path.empty());
  return options;
}

std::string HelpText() {
  return R"(Usage: trainmover-sim [OPTIONS]

Projects the effective training time ratio (ETTR), wasted GPU-hours per week
and their cost for one training job under each recovery policy, by
discrete-event simulation. Defaults and their sources: docs/simulator.md.

Scale and run:
  --gpus LIST              job sizes, comma-separated (default 1024,8192,16384,65536,131072)
  --weeks W                simulated period per replication (default 1)
  --seed N                 random seed; same seed, same output (default 1)
  --replications R         independent replications for the 95% CI, >= 2 (default 10)
  --policies LIST          checkpoint-restart, oobleck, parcae, torchft, trainmover,
                           trainmover-nostandby, measured (default: all; measured
                           only with --measured)
Failures and events:
  --mttf-hours H           fixed job MTTF at every scale (default: power law through
                           7.9 h at 1,024 and 1.8 h at 16,384 GPUs)
  --planned-ratio R        planned maintenance events per unexpected failure
                           (default 47/419, Llama 3)
  --rebalance-every MIN    planned rebalancing every MIN minutes (default: off)
  --stragglers-per-day N   stragglers per day at 16,384 GPUs, scaled with G (default 0)
  --straggler-slowdown F   throughput lost while a straggler runs, 0..1 (default 0.3)
  --straggler-detect-min M minutes until a straggler is found and removed (default 10)
  --infra-min M            infrastructure cost per interruption, minutes (default 2)
Policies:
  --standbys N             standby machines for trainmover (default 1)
  --standby-replenish-min M  minutes until a used standby is replaced (default 10)
  --checkpoint-save-s S    blocking checkpoint save, checkpoint-restart (default 45)
  --step-s S               training step: work lost per failure without checkpoints (default 10)
  --measured FILE          JSON lines from `trainmover-bench switch --json`
Output:
  --json                   one JSON object per line instead of the table
  --closed-form            check checkpoint-restart (failures only) against the closed-form
                           ETTR at each scale, then exit
  --models                 print each policy's downtime per event at each scale, then exit
  --plot FILE              write an SVG plot of wasted GPU-hours against scale
  --price USD              cost of one GPU-hour (default 2.00)
  -h, --help               this text
)";
}

}  // namespace tmsim
