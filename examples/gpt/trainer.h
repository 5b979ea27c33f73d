// Trainer: the training loop of one process, serving one (stage, DP index)
// slot of a DP x PP job (comm.h), or the whole model when D = P = 1.
//
// A step: the micro-batches' forward passes (activations sent on to the next
// stage), then their backward passes in reverse order (gradients sent back),
// GPipe-style; the gradients averaged over the DP group; one AdamW update.
// Every step is bitwise reproducible from (seed, step) and the state, and a
// pipeline split changes no arithmetic: P = 2 gives the hash of P = 1.
//
// Reporting (progress, summary, hash) is done by the process of the last
// stage at DP index 0; the others print nothing but errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adamw.h"
#include "comm.h"
#include "corpus.h"
#include "shape.h"
#include "stage.h"
#include "state.h"

namespace trainmover::gpt {

struct TrainOptions {
  ModelShape shape;
  AdamWConfig adamw;
  int batch = 8;          // sequences per DP replica and step
  int micro_batches = 1;  // batch splits into this many, pipelined
  uint64_t steps = 200;   // the run ends when this many steps are done
  uint64_t seed = 1;
  std::string data_path;  // empty: default_corpus_path()
  int log_every = 10;     // progress line every this many steps; 0: none
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;  // 0: only at the end (when a directory is set)
  bool resume = false;
  bool print_hash = false;  // the final hash also on stdout, "param-hash HEX"
};

struct TrainSummary {
  uint64_t first_step = 0;  // the step the run started from (after a resume)
  uint64_t end_step = 0;
  double first_loss = 0;  // of the first step run, mean over the global batch
  double last_loss = 0;
  double mean_step_s = 0;
  uint64_t param_hash = 0;  // FNV-1a of the whole model's parameters
};

// How the training loop meets the runtime (main.cc implements it over the
// worker API): boundary() runs before every step and returns the step to
// run; recover() runs after a failed step and returns the step to resume
// from. Both may have replaced the state in place.
class StepHooks {
 public:
  virtual ~StepHooks() = default;
  virtual Result<uint64_t> boundary(uint64_t next_step) = 0;
  virtual Result<uint64_t> recover(const Status& failure) = 0;
};

class Trainer {
 public:
  // Loads the text, initialises (or, with resume, loads) the state.
  static Result<std::unique_ptr<Trainer>> create(const TrainOptions& options, StageComm& comm);
  // Only create() can make the key: use it.
  struct Key {
   private:
    Key() = default;
    friend class Trainer;
  };
  Trainer(Key, const TrainOptions& options, StageComm& comm, const StageSpan& span, Corpus corpus);

  // Runs up to options.steps, reporting as above. The summary's losses and
  // hash are valid on the reporting process.
  // With hooks, every step is preceded by hooks->boundary() and a failed
  // step is followed by hooks->recover() instead of failing the run.
  Result<TrainSummary> run(StepHooks* hooks = nullptr);

  // One step; returns the global batch's mean loss on the last stage (only
  // averaged over DP when `report` is set; all processes must agree on it).
  // The step is one iteration of the communicators (recorded in a job's
  // first steps, replayed by a standby's warm-up).
  Result<double> step(bool report);
  // A standby's warm-up on sandbox communicators: runs the first
  // `iterations` steps of a fresh run, as an active rank of this stage ran
  // (and recorded) them, so that every buffer, allocator pool and page the
  // stage's steps touch is there when it is promoted. The state changes:
  // the promotion's state transfer (or rollback) replaces it.
  Status warm_up(uint64_t iterations);
  // Replaces the state with the latest checkpoint that every stage has in
  // options.checkpoint_dir (agreed by an allreduce over the job: collective),
  // or keeps it when there is none. --resume calls it before the first step;
  // a DP = 1 job can call it between steps to roll back in place.
  Status restore_checkpoint();
  // This stage's newest checkpoint of a step <= at_most loaded in place,
  // without any collective (for a rollback during a recovery, when the
  // communicators are failed); the initial state when there is none.
  // Returns the step to run next.
  Result<uint64_t> rollback_in_place(uint64_t at_most);
  // The whole model's parameter hash, chained through the stages: every
  // process takes part; the last stage's result is the model's.
  Result<uint64_t> model_hash();

  TrainState& state() { return state_; }
  const Stage<float>& stage() const { return stage_; }

 private:
  Status maybe_checkpoint(bool at_end);
  bool reporter() const;
  // Whether step n (1-based) of a run that started at step `first` reports
  // its loss (an extra allreduce: the warm-up must make the same calls).
  bool reports(uint64_t n, uint64_t first) const;
  Result<double> step_body(bool report);
  void sample(int micro, StageCache<float>& cache) const;

  TrainOptions options_;
  StageComm& comm_;
  Stage<float> stage_;
  Corpus corpus_;
  TrainState state_;
  std::vector<float> grads_;
  std::vector<StageCache<float>> caches_;  // one per micro-batch in flight
  std::vector<float> act_in_, grad_out_, grad_in_;
  // The step the job started from (after a resume); a standby's trainer
  // starts from 0, so its steps report as the job's ranks' (reports()).
  uint64_t start_step_ = 0;
};

}  // namespace trainmover::gpt
