#include "recovery_cmd.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "cli/command_line.h"
#include "common/median.h"
#include "common/parse.h"
#include "common/str.h"
#include "job_runner.h"
#include "recovery_run.h"

namespace trainmover::bench {
namespace {

constexpr int kExitFailed = 1;
constexpr double kRatioGoal = 20;     // stop-restart / trainmover downtime, at every N
constexpr double kScalingGoal = 1.5;  // trainmover's downtime at the largest N / the smallest

struct RecoveryOptions {
  std::vector<int64_t> nranks = {4, 8, 16};
  std::vector<std::string> impls = {"trainmover", "stop-restart", "cold-standby"};
  RecoveryPlan plan;
  int64_t repeat = 1;
  bool json = false;
};

using RowKey = std::pair<std::string, int>;  // (way, N)

// The installed layout (every program in one bin directory) or the build
// tree's (tools/bench/, launcher/, examples/gpt/).
std::string sibling_program(const std::string& build_dir, const std::string& name) {
  auto self = self_executable();
  if (!self.ok()) return name;
  const std::filesystem::path dir = std::filesystem::path(*self).parent_path();
  for (const auto& candidate : {dir / name, dir / "../.." / build_dir / name}) {
    if (access(candidate.c_str(), X_OK) == 0) return std::filesystem::weakly_canonical(candidate);
  }
  return name;
}

std::optional<int> parse(int argc, char** argv, RecoveryOptions& o) {
  RecoveryPlan& p = o.plan;
  p.launcher = sibling_program("launcher", "trainmover-launch");
  p.trainer = sibling_program("examples/gpt", "trainmover-gpt");
  int layers = 2, d_model = 16, batch = 2;
  cli::CommandLine table(
      "trainmover-bench recovery", "trainmover-bench recovery [OPTIONS]",
      "The example job (trainmover-gpt, DP N/2 x PP 2, under trainmover-launch) loses\n"
      "slot 1 to SIGKILL mid-run; it is recovered by trainmover (a warm standby, the\n"
      "delta switch, the state of a replica), by stop-restart (every rank stopped, the\n"
      "job started again from its checkpoint: torchrun's way) and by cold-standby (a\n"
      "standby started at the failure, every communicator rebuilt). One row per way\n"
      "and N: downtime and its parts, lost steps, CPU time of the job's processes.\n");
  table.integer_list("nranks", "N,...", 2, 256, o.nranks, "job sizes, even (default 4,8,16)")
      .choice_list("impl", "IMPL,...", {"trainmover", "stop-restart", "cold-standby"}, o.impls,
                   "trainmover, stop-restart, cold-standby (default all)")
      .integer("steps", "S", 10, 1000000, p.steps, "steps of each run (default 150)")
      .integer("kill-step", "K", 6, 1000000, p.kill_step,
               "kill the victim once step K was logged (default 60)")
      .integer("checkpoint-every", "C", 1, 1000000, p.checkpoint_every,
               "checkpoint every C steps, in every way (default 25)")
      .integer("layers", "L", 2, 64, layers, "trainmover-gpt --layers (default 2)")
      .integer("d-model", "C", 2, 1024, d_model, "trainmover-gpt --d-model (default 16)")
      .integer("batch", "B", 1, 1024, batch, "trainmover-gpt --batch (default 2)")
      .duration("timeout", "SEC", 1, 3600, p.timeout_s, "limit of each run (default 180)")
      .integer("repeat", "R", 1, 100, o.repeat,
               "run every way and N R times, in rounds, and judge the goals on the medians "
               "(default 1)")
      .text("launcher", "PATH", p.launcher, "trainmover-launch (default: next to this program)")
      .text("trainer", "PATH", p.trainer, "trainmover-gpt (default: next to this program)")
      .flag("json", o.json, "one JSON object per way and N, instead of the table");
  if (auto exit_code = table.parse(argc, argv)) return exit_code;
  for (int64_t n : o.nranks)
    if (n % 2 != 0)
      return table.usage_error(str_cat("--nranks ", n, " is odd: the job is N/2 x 2"));
  if (p.kill_step >= p.steps) return table.usage_error("--kill-step must be below --steps");
  if (p.kill_step <= p.checkpoint_every)
    return table.usage_error(
        "--kill-step must come after the first checkpoint (--checkpoint-every)");
  p.model = {"--layers",  std::to_string(layers),
             "--d-model", std::to_string(d_model),
             "--heads",   "2",
             "--seq-len", "16",
             "--batch",   std::to_string(batch)};
  if (d_model % 2 != 0) return table.usage_error("--d-model must be even (2 heads)");
  return std::nullopt;
}

RecoveryImpl impl_of(const std::string& name) {
  if (name == "stop-restart") return RecoveryImpl::kStopRestart;
  if (name == "cold-standby") return RecoveryImpl::kColdStandby;
  return RecoveryImpl::kTrainMover;
}

void print_table_row(const RecoveryRow& r, std::FILE* out = stdout) {
  const std::string critical =
      r.critical_cpu_s >= 0 ? str_cat(std::lround(r.critical_cpu_s * 1e4) / 1e4) : "-";
  std::fprintf(out, "%-13s %4d %10.3f %10.4f %9.3f %9.4f %9.3f %5lld %8.2f %9s %8.3f\n",
               recovery_impl_name(r.impl), r.nranks, r.downtime_s, r.detection_s, r.switch_s,
               r.state_transfer_s, r.first_step_s, static_cast<long long>(r.lost_steps), r.cpu_s,
               critical.c_str(), r.normal_step_s);
}

// Each figure's median over the runs of one way and N (a figure that some
// run lacks, critical_cpu_s of stop-restart, stays -1).
RecoveryRow median_row(const std::vector<RecoveryRow>& runs) {
  auto mid = [&](auto field) {
    std::vector<double> values;
    for (const RecoveryRow& r : runs) values.push_back(static_cast<double>(r.*field));
    return median(std::move(values));
  };
  RecoveryRow m = runs.front();
  m.downtime_s = mid(&RecoveryRow::downtime_s);
  m.detection_s = mid(&RecoveryRow::detection_s);
  m.switch_s = mid(&RecoveryRow::switch_s);
  m.state_transfer_s = mid(&RecoveryRow::state_transfer_s);
  m.first_step_s = mid(&RecoveryRow::first_step_s);
  m.lost_steps = std::llround(mid(&RecoveryRow::lost_steps));
  m.cpu_s = mid(&RecoveryRow::cpu_s);
  m.critical_cpu_s = m.critical_cpu_s >= 0 ? mid(&RecoveryRow::critical_cpu_s) : -1;
  m.wall_s = mid(&RecoveryRow::wall_s);
  m.normal_step_s = mid(&RecoveryRow::normal_step_s);
  return m;
}

// The goals, from the rows of this run (the medians with --repeat); on
// stdout with the table, on stderr with --json (stdout holds only rows there).
void print_goals(const std::map<RowKey, RecoveryRow>& rows, const std::vector<int64_t>& nranks,
                 std::FILE* out) {
  auto find = [&](const char* impl, int n) -> const RecoveryRow* {
    auto it = rows.find({impl, n});
    return it == rows.end() ? nullptr : &it->second;
  };
  for (int64_t n : nranks) {
    const RecoveryRow* tm = find("trainmover", static_cast<int>(n));
    const RecoveryRow* sr = find("stop-restart", static_cast<int>(n));
    if (tm == nullptr || sr == nullptr) continue;
    const double ratio = tm->downtime_s > 0 ? sr->downtime_s / tm->downtime_s : 0;
    std::fprintf(out, "# N=%lld: stop-restart / trainmover downtime = %.1f (goal >= %.0f): %s\n",
                 static_cast<long long>(n), ratio, kRatioGoal,
                 ratio >= kRatioGoal ? "met" : "NOT met");
  }
  const RecoveryRow* lo = find("trainmover", static_cast<int>(nranks.front()));
  const RecoveryRow* hi = find("trainmover", static_cast<int>(nranks.back()));
  if (lo != nullptr && hi != nullptr && nranks.size() > 1 && lo->downtime_s > 0) {
    const double growth = hi->downtime_s / lo->downtime_s;
    std::fprintf(out, "# trainmover downtime N=%lld / N=%lld = %.2f (goal <= %.1f): %s\n",
                 static_cast<long long>(nranks.back()), static_cast<long long>(nranks.front()),
                 growth, kScalingGoal, growth <= kScalingGoal ? "met" : "NOT met");
    // With fewer CPUs than processes the wall time adds up every rank's
    // work; the critical path's CPU is what a core per process would see.
    if (lo->critical_cpu_s > 0 && hi->critical_cpu_s >= 0)
      std::fprintf(out,
                   "# trainmover critical-path CPU N=%lld / N=%lld = %.2f (%.4f s / %.4f s; "
                   "wall time needs a core per process to show it)\n",
                   static_cast<long long>(nranks.back()), static_cast<long long>(nranks.front()),
                   hi->critical_cpu_s / lo->critical_cpu_s, hi->critical_cpu_s, lo->critical_cpu_s);
  }
}

// One run of `impl` at N = n, its row printed as it comes (with --json a
// JSON object with the critical path's parts and, with --repeat, the round).
Result<RecoveryRow> run_and_print(const RecoveryOptions& options, const std::string& impl, int n,
                                  int64_t round) {
  RecoveryPlan plan = options.plan;
  plan.impl = impl_of(impl);
  plan.nranks = n;
  auto row = run_recovery(plan);
  if (!row.ok()) {
    std::fprintf(stderr, "trainmover-bench recovery: %s N=%d: %s\n", impl.c_str(), n,
                 row.status().message().c_str());
    return row;
  }
  if (options.json) {
    Json line = row->to_json();
    line["critical_cpu_parts"] =
        row->critical_cpu_parts.is_object() ? row->critical_cpu_parts : Json(nullptr);
    if (options.repeat > 1) line["round"] = round;
    std::printf("%s\n", json_line(line).c_str());
  } else {
    print_table_row(*row);
  }
  std::fflush(stdout);
  return row;
}

void print_medians(const RecoveryOptions& options, std::map<RowKey, RecoveryRow>& rows,
                   std::FILE* out) {
  std::fprintf(out, "# medians of %lld runs:\n", static_cast<long long>(options.repeat));
  for (int64_t n : options.nranks) {
    for (const std::string& impl : options.impls) {
      std::fprintf(out, "# ");
      print_table_row(rows[{impl, static_cast<int>(n)}], out);
    }
  }
}

}  // namespace

int recovery_main(int argc, char** argv) {
  RecoveryOptions options;
  if (auto exit_code = parse(argc, argv, options)) return *exit_code;
  std::map<RowKey, std::vector<RecoveryRow>> runs;
  if (!options.json)
    std::printf("%-13s %4s %10s %10s %9s %9s %9s %5s %8s %9s %8s\n", "impl", "N", "downtime_s",
                "detection", "switch", "state", "first", "lost", "cpu_s", "crit_cpu", "step_s");
  for (int64_t round = 1; round <= options.repeat; ++round) {
    for (int64_t n : options.nranks) {
      for (const std::string& impl : options.impls) {
        auto row = run_and_print(options, impl, static_cast<int>(n), round);
        if (!row.ok()) return kExitFailed;
        runs[{impl, static_cast<int>(n)}].push_back(*row);
      }
    }
  }
  std::FILE* out = options.json ? stderr : stdout;
  std::map<RowKey, RecoveryRow> rows;
  for (const auto& [key, list] : runs) rows[key] = median_row(list);
  if (options.repeat > 1) print_medians(options, rows, out);
  print_goals(rows, options.nranks, out);
  return 0;
}

}  // namespace trainmover::bench
