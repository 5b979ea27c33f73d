// A Slurm batch job seen from outside, for `trainmover-bench slurm-recovery
// --impl slurm-requeue`: submitted with sbatch, its output file followed
// line by line as it grows, across requeues, until the job has ended.
// Every call talks to slurmctld through the Slurm commands (sbatch, squeue,
// scancel) with SLURM_CONF set to `conf`. Not thread-safe; one caller.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace trainmover::bench {

struct BatchJob {
  std::string conf;    // slurm.conf of the cluster
  std::string job_id;  // as sbatch --parsable printed it
};

// Runs `sbatch --parsable ARGS...` (each entry of `env`, "K=V", added to its
// environment, which the job inherits); returns the submitted job.
Result<BatchJob> submit_batch(const std::string& conf, const std::vector<std::string>& args,
                              const std::vector<std::string>& env);

// squeue's state of the job ("PENDING", "RUNNING", "COMPLETED", ...); empty
// when slurmctld did not answer.
std::string batch_job_state(const BatchJob& job);

// Whether `state` is one a job never leaves (COMPLETED, FAILED, ...).
// PENDING after a requeue is not: the job runs again.
bool batch_state_is_final(const std::string& state);

// Hands each line appended to `path` (the job's --output, opened with
// --open-mode=append) to `on_line` with the time it was read, looking every
// 2 ms, until the job reached a final state and its last output was read.
// Stops early with on_line's first error, or a timeout at `deadline`
// (`timeout_s` names it). Returns the final state.
Result<std::string> follow_batch_output(
    const BatchJob& job, const std::string& path, Deadline deadline, double timeout_s,
    const std::function<Status(const std::string& line, double now)>& on_line);

// scancel: ends the job, pending or running, whatever happened before.
void cancel_batch(const BatchJob& job);

}  // namespace trainmover::bench
