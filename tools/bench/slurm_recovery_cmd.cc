#include "slurm_recovery_cmd.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "cli/command_line.h"
#include "common/parse.h"
#include "job_runner.h"
#include "slurm_recovery_run.h"

namespace trainmover::bench {
namespace {

constexpr int kExitFailed = 1;
constexpr double kRatioGoal = 20;  // a Slurm way's downtime / trainmover's, per event

struct Options {
  std::vector<std::string> events = {"task-kill", "node-kill"};
  std::vector<std::string> impls = {"trainmover", "slurm-restart", "slurm-requeue"};
  SlurmPlan plan;
  bool json = false;
};

// The build tree's trainmover-gpt (tools/bench/ -> examples/gpt/) or the
// installed one next to this program.
std::string default_trainer() {
  auto self = self_executable();
  if (!self.ok()) return "trainmover-gpt";
  const std::filesystem::path dir = std::filesystem::path(*self).parent_path();
  for (const auto& c : {dir / "trainmover-gpt", dir / "../../examples/gpt/trainmover-gpt"}) {
    if (access(c.c_str(), X_OK) == 0) return std::filesystem::weakly_canonical(c);
  }
  return "trainmover-gpt";
}

std::optional<int> parse(int argc, char** argv, Options& o) {
  SlurmPlan& p = o.plan;
  p.trainer = default_trainer();
  int layers = 2, d_model = 16, batch = 2;
  cli::CommandLine table(
      "trainmover-bench slurm-recovery", "trainmover-bench slurm-recovery --cluster DIR [OPTIONS]",
      "trainmover-gpt --dp N under srun --trainmover on a running Slurm cluster (started\n"
      "with tests/slurm/cluster.sh, its plugstack.conf loading the plugin) loses slot 1's\n"
      "task (SIGKILL) or its whole node (slurmd, slurmstepd and tasks SIGKILLed; the node's\n"
      "slurmd is started again after the run). trainmover: one standby node; slurm-restart:\n"
      "no standby, the step ends and srun runs it again from its checkpoint (--resume);\n"
      "slurm-requeue: a batch job (sbatch --requeue) without standby, requeued by Slurm\n"
      "(after a failed srun, by scontrol requeue in its script), whose next run resumes\n"
      "from the checkpoint. One row per way and event: downtime and its parts, lost\n"
      "steps. Needs root.\n");
  table.text("cluster", "DIR", p.cluster, "the cluster's folder (slurm.conf, slurmd.NODE.pid)")
      .choice_list("event", "EVENT,...", {"task-kill", "node-kill"}, o.events,
                   "task-kill, node-kill (default both)")
      .choice_list("impl", "IMPL,...", {"trainmover", "slurm-restart", "slurm-requeue"}, o.impls,
                   "trainmover, slurm-restart, slurm-requeue (default all)")
      .integer("nodes", "N", 2, 64, p.nodes, "active nodes, one rank each (default 2)")
      .integer("steps", "S", 10, 1000000, p.steps, "steps of each run (default 60)")
      .integer("kill-step", "K", 6, 1000000, p.kill_step,
               "kill once step K was logged (default 25)")
      .integer("checkpoint-every", "C", 1, 1000000, p.checkpoint_every,
               "checkpoint every C steps (default 10)")
      .integer("layers", "L", 2, 64, layers, "trainmover-gpt --layers (default 2)")
      .integer("d-model", "C", 2, 1024, d_model, "trainmover-gpt --d-model (default 16)")
      .integer("batch", "B", 1, 1024, batch, "trainmover-gpt --batch (default 2)")
      .duration("timeout", "SEC", 1, 3600, p.timeout_s, "limit of each run (default 400)")
      .text("srun", "PATH", p.srun, "srun (default: srun on PATH)")
      .text("trainer", "PATH", p.trainer, "trainmover-gpt (default: next to this program)")
      .flag("json", o.json, "one JSON object per way and event, instead of the table");
  if (auto exit_code = table.parse(argc, argv)) return exit_code;
  if (p.cluster.empty()) return table.usage_error("--cluster DIR is required");
  if (access((p.cluster + "/slurm.conf").c_str(), R_OK) != 0)
    return table.usage_error(str_cat("--cluster ", p.cluster, ": no slurm.conf there"));
  p.cluster = std::filesystem::absolute(p.cluster).lexically_normal().string();
  if (p.kill_step >= p.steps) return table.usage_error("--kill-step must be below --steps");
  if (p.kill_step <= p.checkpoint_every)
    return table.usage_error(
        "--kill-step must come after the first checkpoint (--checkpoint-every)");
  if (d_model % 2 != 0) return table.usage_error("--d-model must be even (2 heads)");
  p.model = {"--layers",  std::to_string(layers),
             "--d-model", std::to_string(d_model),
             "--heads",   "2",
             "--seq-len", "16",
             "--batch",   std::to_string(batch)};
  return std::nullopt;
}

void print_table_row(const SlurmRow& r) {
  std::printf("%-13s %-9s %10.4f %10.4f %9.3f %9.4f %9.3f %5lld %8.3f %4d\n",
              slurm_impl_name(r.impl), slurm_event_name(r.event), r.downtime_s, r.detection_s,
              r.switch_s, r.state_transfer_s, r.first_step_s, static_cast<long long>(r.lost_steps),
              r.normal_step_s, r.srun_exit);
}

void print_ratios(const std::map<std::pair<std::string, std::string>, SlurmRow>& rows,
                  const std::vector<std::string>& events, std::FILE* out) {
  for (const std::string& event : events) {
    auto tm = rows.find({"trainmover", event});
    if (tm == rows.end() || tm->second.downtime_s <= 0) continue;
    for (const char* way : {"slurm-restart", "slurm-requeue"}) {
      auto slurm = rows.find({way, event});
      if (slurm == rows.end()) continue;
      const double ratio = slurm->second.downtime_s / tm->second.downtime_s;
      std::fprintf(out, "# %s: %s / trainmover downtime = %.1f (goal >= %.0f): %s\n", event.c_str(),
                   way, ratio, kRatioGoal, ratio >= kRatioGoal ? "met" : "NOT met");
    }
  }
}

SlurmImpl impl_of(const std::string& name) {
  if (name == "slurm-restart") return SlurmImpl::kSlurmRestart;
  if (name == "slurm-requeue") return SlurmImpl::kSlurmRequeue;
  return SlurmImpl::kTrainMover;
}

SlurmEvent event_of(const std::string& name) {
  return name == "node-kill" ? SlurmEvent::kNodeKill : SlurmEvent::kTaskKill;
}

}  // namespace

int slurm_recovery_main(int argc, char** argv) {
  Options options;
  if (auto exit_code = parse(argc, argv, options)) return *exit_code;
  std::map<std::pair<std::string, std::string>, SlurmRow> rows;
  if (!options.json)
    std::printf("%-13s %-9s %10s %10s %9s %9s %9s %5s %8s %4s\n", "impl", "event", "downtime_s",
                "detection", "switch", "state", "first", "lost", "step_s", "srun");
  for (const std::string& event : options.events) {
    for (const std::string& impl : options.impls) {
      SlurmPlan plan = options.plan;
      plan.event = event_of(event);
      plan.impl = impl_of(impl);
      auto row = run_slurm_recovery(plan);
      if (!row.ok()) {
        std::fprintf(stderr, "trainmover-bench slurm-recovery: %s %s: %s\n", impl.c_str(),
                     event.c_str(), row.status().message().c_str());
        return kExitFailed;
      }
      if (options.json) {
        std::printf("%s\n", json_line(row->to_json()).c_str());
      } else {
        print_table_row(*row);
      }
      std::fflush(stdout);
      rows[{impl, event}] = *row;
    }
  }
  print_ratios(rows, options.events, options.json ? stderr : stdout);
  return 0;
}

}  // namespace trainmover::bench
