#include "warmup.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace trainmover::gpt {
namespace {

constexpr auto kTracePoll = std::chrono::milliseconds(50);

// Whether every file of `paths` exists by the deadline. The job's ranks
// link() their traces into place once complete, so existing means whole.
bool wait_for(const std::vector<std::string>& paths, std::chrono::steady_clock::time_point until) {
  while (true) {
    bool all = true;
    for (const std::string& p : paths) all = all && ::access(p.c_str(), R_OK) == 0;
    if (all) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(kTracePoll);
  }
}

Status worker_status(tm_result_t rc, const char* what) {
  if (rc == TM_SUCCESS) return Status::Ok();
  return Status(rc, str_cat(what, ": ", tm_get_last_error()));
}

// One stage replayed: its sandboxes and trainer after `iterations` steps.
Result<std::unique_ptr<WarmStage>> replay(const TrainOptions& options, int dp, int pp, int stage,
                                          uint64_t iterations) {
  auto warm = std::make_unique<WarmStage>();
  TM_ASSIGN_OR_RETURN(warm->comm, StageComm::create_sandbox(dp, pp, stage));
  // The options the promoted rank trains with, but no resume: the recorded
  // steps are a fresh run's first ones, and its state comes from the job.
  TrainOptions fresh = options;
  fresh.resume = false;
  TM_ASSIGN_OR_RETURN(warm->trainer, Trainer::create(fresh, *warm->comm));
  TM_RETURN_IF_ERROR(warm->trainer->warm_up(iterations));
  // Standbys of the job now rather than when promoted: each has its store
  // connection, listeners and progress thread, about 2 ms of CPU a stage
  // that the promotion, on the recovery's critical path, no longer spends.
  TM_RETURN_IF_ERROR(warm->comm->become_standby());
  return warm;
}

}  // namespace

Result<Warmup> Warmup::run(const TrainOptions& options, int dp, int pp,
                           const std::string& trace_dir, uint64_t iterations, double wait_s,
                           tm_worker_t worker) {
  Warmup w;
  w.dp_ = dp;
  std::vector<tm_stage_t> warm, cold;
  std::string detail;
  // One deadline for every role's traces, not one each: a standby that is
  // not ready cannot be promoted, so the wait bounds how long the job may
  // go without a usable standby (the ranks save traces at idle priority,
  // which on a busy node can take long); what is late is served cold.
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(wait_s));
  for (int stage : warmed_stages(pp)) {
    const tm_stage_t role = stage_role(stage, pp);
    Status outcome;
    if (iterations == 0) {
      outcome =
          error(TM_ERROR_INVALID_ARGUMENT, "recording is off (TRAINMOVER_RECORD_ITERATIONS=0)");
    } else if (!wait_for(StageComm::trace_paths(trace_dir, dp, pp, stage), until)) {
      outcome = error(TM_ERROR_TIMEOUT, "no trace in ", trace_dir, " after ", wait_s, " s");
    } else {
      TM_RETURN_IF_ERROR(worker_status(tm_worker_warmup_begin(worker, role), "report warm-up"));
      auto replayed = replay(options, dp, pp, stage, iterations);
      if (replayed.ok()) w.stages_[stage] = std::move(*replayed);
      outcome = replayed.status();
    }
    if (outcome.ok()) {
      warm.push_back(role);
      continue;
    }
    cold.push_back(role);
    const std::string why = str_cat(role_name(role), ": cold (", outcome.message(), ")");
    std::fprintf(stderr, "trainmover-gpt: standby warm-up: %s\n", why.c_str());
    detail += (detail.empty() ? "" : "; ") + why;
  }
  // Roles beyond the warmed stages' (none when pp < 4) share a warmed role's
  // name: "middle" stands for every middle stage.
  TM_RETURN_IF_ERROR(worker_status(
      tm_worker_warmup_done(worker, warm.data(), static_cast<int>(warm.size()), cold.data(),
                            static_cast<int>(cold.size()), detail.c_str()),
      "report warm-up"));
  return w;
}

Result<std::unique_ptr<WarmStage>> Warmup::take(int slot) {
  auto it = stages_.find(slot / dp_);
  std::unique_ptr<WarmStage> taken;
  if (it != stages_.end()) {
    taken = std::move(it->second);
    stages_.erase(it);
  }
  if (taken) TM_RETURN_IF_ERROR(taken->comm->take_slot(slot));
  return taken;
}

}  // namespace trainmover::gpt
