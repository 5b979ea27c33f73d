// Slurm's commands run from `trainmover-bench slurm-recovery`, and a batch
// job seen from outside (--impl slurm-requeue): submitted with sbatch, its
// output file followed line by line as it grows, across requeues, until
// the job has ended.
// Every call talks to slurmctld through the Slurm commands (sbatch, squeue,
// scancel) with SLURM_CONF set to `conf`. Not thread-safe; one caller.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "run_io.h"

namespace trainmover::bench {

// Runs a Slurm command (argv[0] looked up on PATH) to its end, bounded;
// returns its output (stdout and stderr), or why it failed (not started,
// timed out, or a non-zero exit, its output quoted).
Result<std::string> slurm_command(const std::string& conf, std::vector<std::string> argv,
                                  std::vector<std::string> env = {});

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
Result<std::string> follow_batch_output(const BatchJob& job, const std::string& path,
                                        Deadline deadline, double timeout_s,
                                        const LineHandler& on_line);

// scancel: ends the job, pending or running, whatever happened before.
void cancel_batch(const BatchJob& job);

}  // namespace trainmover::bench
