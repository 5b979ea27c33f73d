// Warmup: a standby's warm-up by trace replay (docs/runtime.md, "Standby
// warm-up"). Before it waits to be promoted, the standby builds the stage of
// each distinct role of the job (first, middle, last: warmed_stages()) and
// runs real training steps of it on sandbox communicators that answer from
// the traces the job's ranks recorded in its first steps. What the steps
// allocated and touched (parameters, optimizer moments, activations and
// caches, the data loader, the allocator's pools, resident pages) stays,
// and its sandboxes then become standbys of the job (their store
// connections, listeners and progress threads made), so a promotion to that
// role only adds the job's links and the state.
//
// Outcome per role, reported to the coordinator: warm, or cold when its
// trace did not appear within the wait or its replay failed (the reason is
// in the ready report); a cold role is built when promoted, as before. The
// standby is ready (for every role of the job) once each role is warm or
// cold; it never fails for a trace.
//
// Not thread-safe: the training thread.
#pragma once

#include <map>
#include <memory>

#include "comm.h"
#include "trainer.h"
#include "trainmover/trainmover.h"

namespace trainmover::gpt {

struct WarmStage {
  std::unique_ptr<StageComm> comm;  // sandboxes; the trainer holds a reference
  std::unique_ptr<Trainer> trainer;
};

class Warmup {
 public:
  // Warms up every role whose trace is in `trace_dir` (waiting up to
  // wait_s for each), running `iterations` steps of it, and reports the
  // outcome through `worker`. Fails only when the worker cannot report.
  static Result<Warmup> run(const TrainOptions& options, int dp, int pp,
                            const std::string& trace_dir, uint64_t iterations, double wait_s,
                            tm_worker_t worker);

  // The warmed stage of `slot`, whose sandboxes became standbys of the job
  // at the end of its warm-up; nullptr when that stage is cold. The other
  // warmed stages (their buffers and the rings their sandboxes made) stay
  // until release_others() or the destructor: unmapping them is CPU work
  // that would lie on the recovery's critical path here (docs/runtime.md).
  Result<std::unique_ptr<WarmStage>> take(int slot);
  // Frees every warmed stage not taken: the joiner calls it once its first
  // step is done.
  void release_others() { stages_.clear(); }

 private:
  int dp_ = 1;
  std::map<int, std::unique_ptr<WarmStage>> stages_;  // by stage index
};

}  // namespace trainmover::gpt
