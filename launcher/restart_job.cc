#include "restart_job.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "child_env.h"
#include "control/event_log.h"

namespace trainmover::launcher {
namespace {

using nlohmann::json;

// A start's failure worth a restart: a rank failed by itself (not a timeout,
// not a signal we forwarded).
bool restartable(const LocalJobResult& r) {
  return r.first_failed_rank >= 0 && !r.timed_out && r.forwarded_signal == 0;
}

}  // namespace

Result<RestartJobResult> run_restart_job(RestartJobOptions options) {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<control::EventLog> events,
                      control::EventLog::open(options.events));
  const Deadline deadline = Deadline::after(options.job.timeout);
  const EnvVars base_env = options.job.extra_env;
  RestartJobResult result;
  for (int restart = 0;; ++restart) {
    LocalJobOptions job = options.job;
    job.extra_env = base_env;
    job.extra_env.emplace_back("TRAINMOVER_RESTART_COUNT", std::to_string(restart));
    job.timeout = std::max(deadline.remaining(), Duration(std::chrono::milliseconds(1)));
    Clock::time_point failed_at{};
    job.prepare_job = [&](const JobSecret&, uint64_t) -> Result<EnvVars> {
      events->record("job_started", {{"restart", restart}, {"nprocs", job.nprocs}});
      return EnvVars{};
    };
    // The first non-zero exit of this start is its failure: the exits that
    // follow are the ranks this launcher stopped because of it.
    job.on_exit = [&](pid_t pid, int exit_code, int signal) {
      if ((exit_code == 0 && signal == 0) || failed_at != Clock::time_point{}) return;
      failed_at = Clock::now();
      events->record(
          "rank_failed",
          {{"restart", restart}, {"pid", pid}, {"exit_code", exit_code}, {"signal", signal}});
    };
    TM_ASSIGN_OR_RETURN(result.last, run_local_job(job));
    result.restarts = restart;
    if (!restartable(result.last)) {
      if (result.last.succeeded()) events->record("job_finished", {{"restarts", restart}});
      return result;
    }
    const RankResult& failed = result.last.ranks[result.last.first_failed_rank];
    std::fprintf(stderr, "trainmover-launch: %s; every rank stopped\n", failed.describe().c_str());
    if (restart >= options.max_restarts || deadline.expired()) {
      events->record("restarts_exhausted", {{"restarts", restart}});
      return result;
    }
    const double stopped_s = to_seconds(Clock::now() - failed_at);
    events->record("job_restarting",
                   {{"restart", restart + 1}, {"slot", failed.rank}, {"stopped_s", stopped_s}});
    std::fprintf(stderr, "trainmover-launch: restarting the job (%d of %d)\n", restart + 1,
                 options.max_restarts);
  }
}

}  // namespace trainmover::launcher
