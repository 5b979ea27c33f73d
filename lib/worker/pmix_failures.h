// PmixFailures: the worker's PMIx failure source. Under srun --mpi=pmix
// (TRAINMOVER_PMIX_EVENTS=1, which trainmover-launch --slurm-task sets when
// the task is a PMIx client), it listens for the PMIx events that say a task
// of the job is gone (pmix::FailureListener) and hands each gone task to
// `report`, which the worker sends to the coordinator as a TaskLost: the
// swap then starts as after an exit report.
//
// Contract: start() returns nullptr when the events are not wanted
// (TRAINMOVER_PMIX_EVENTS unset or 0), and an error naming the cause when
// they are wanted but cannot be had (no PMIx in this build, not a PMIx
// client, PMIx refusing the listener). `report` runs on PMIx's progress
// thread, one event at a time: it must not block. The destructor waits
// until no `report` runs; destroy this before whatever `report` uses.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"

namespace trainmover::worker {

class PmixFailures {
 public:
  using Report = std::function<void(int task, const std::string& detail)>;
  static Result<std::unique_ptr<PmixFailures>> start(Report report);
  ~PmixFailures();
  PmixFailures(const PmixFailures&) = delete;
  PmixFailures& operator=(const PmixFailures&) = delete;

  // This process's task (its PMIx rank, PMIX_RANK) when the events are
  // wanted, so that its Register names it; -1 otherwise.
  static Result<int> own_task();

  struct Impl;  // defined in the .cc (holds the PMIx listener and client)

 private:
  explicit PmixFailures(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainmover::worker
