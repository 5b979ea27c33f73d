// trainmover-gpt: trains a small GPT (examples/gpt) as one process or as the
// ranks of a DP x PP TrainMover job; the workload of the runtime's tests.
//
// Under trainmover-launch it runs on the worker API (trainmover(3)): it
// registers its state and communicators, marks every step boundary,
// recovers after a failed collective, and, started as a standby, waits to
// be promoted and then takes its slot's role with the state of a replica.
//
// Exit status: 0 when the run finished; 2 for a bad command line; 1 when it
// failed (the message names why).
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>

#include "comm.h"
#include "common/parse.h"
#include "options.h"
#include "trainer.h"
#include "warmup.h"

namespace {

using namespace trainmover::gpt;
using trainmover::Result;
using trainmover::Status;

constexpr int kExitFailed = 1;
// How long a standby waits to be promoted: the job's lifetime at most.
constexpr double kPromotionWaitS = 24 * 3600.0;

int fail(const Status& status) {
  std::fprintf(stderr, "trainmover-gpt: %s\n", status.message().c_str());
  return kExitFailed;
}

Status worker_status(tm_result_t rc, const char* what) {
  if (rc == TM_SUCCESS) return Status::Ok();
  return Status(
      rc, trainmover::str_cat(what, ": ", tm_get_error_string(rc), ": ", tm_get_last_error()));
}

void print_summary(const CommandLine& cl, const Trainer& trainer, const TrainSummary& s) {
  std::fprintf(stderr,
               "trainmover-gpt: done: steps %" PRIu64 "-%" PRIu64
               ", loss %.4f -> %.4f, %.3f ms/step,"
               " dp %d pp %d, %zu parameters on this stage, hash %016" PRIx64 "\n",
               s.first_step, s.end_step, s.first_loss, s.last_loss, s.mean_step_s * 1e3, cl.dp,
               cl.pp, trainer.stage().layout().total(), s.param_hash);
  if (cl.train.print_hash) std::printf("param-hash %016" PRIx64 "\n", s.param_hash);
  std::fflush(stdout);
}

// The training loop's hooks over the worker API.
// A joiner's warm-up (`spare`, may be empty) keeps the stages of the roles
// it was not promoted to until its first step is done (the second boundary):
// freeing them earlier would lengthen the recovery (warmup.h).
class WorkerHooks final : public StepHooks {
 public:
  WorkerHooks(tm_worker_t worker, std::optional<Warmup>& spare) : worker_(worker), spare_(spare) {}
  Result<uint64_t> boundary(uint64_t next_step) override {
    uint64_t run = 0;
    TM_RETURN_IF_ERROR(
        worker_status(tm_worker_step_boundary(worker_, next_step, &run), "step boundary"));
    if (spare_ && ++boundaries_ == 2) spare_->release_others();
    return run;
  }
  Result<uint64_t> recover(const Status& failure) override {
    std::fprintf(stderr, "trainmover-gpt: step failed (%s); recovering\n",
                 failure.message().c_str());
    uint64_t resume = 0;
    TM_RETURN_IF_ERROR(worker_status(tm_worker_recover(worker_, &resume), "recovery"));
    return resume;
  }

 private:
  tm_worker_t worker_;
  std::optional<Warmup>& spare_;
  int boundaries_ = 0;
};

tm_result_t rollback(void* context, uint64_t* next_step) {
  auto step = static_cast<Trainer*>(context)->rollback_in_place(*next_step);
  if (!step.ok()) {
    std::fprintf(stderr, "trainmover-gpt: rollback: %s\n", step.status().message().c_str());
    return step.status().code();
  }
  *next_step = *step;
  return TM_SUCCESS;
}

// A standby's warm-up (warmup.h), unless the launcher gave no trace
// directory or turned it off (trainmover-launch --warmup none).
Result<std::optional<Warmup>> warm_up(const CommandLine& cl, tm_worker_t worker) {
  const std::string mode = trainmover::get_env("TRAINMOVER_WARMUP").value_or("replay");
  if (mode != "replay" && mode != "none")
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "TRAINMOVER_WARMUP is '", mode,
                             "'; it must be replay or none");
  const std::string dir = trainmover::get_env("TRAINMOVER_TRACE_DIR").value_or("");
  if (mode == "none" || dir.empty()) return std::optional<Warmup>();
  tm_config_t config = TM_CONFIG_INITIALIZER;
  TM_RETURN_IF_ERROR(worker_status(tm_config_init(&config), "read the TRAINMOVER_* environment"));
  TM_ASSIGN_OR_RETURN(Warmup warmup, Warmup::run(cl.train, cl.dp, cl.pp, dir,
                                                 static_cast<uint64_t>(config.record_iterations),
                                                 cl.warmup_wait_s, worker));
  return std::optional<Warmup>(std::move(warmup));
}

// The process's part of the job: alone, an active rank, or a standby that
// is promoted first (to a warmed-up stage when it has one). Its communicators
// are left in `held`: the worker may abort them from its own thread until
// tm_worker_destroy (trainmover(3)).
Status train(const CommandLine& cl, tm_worker_t worker, std::unique_ptr<StageComm>& held) {
  tm_worker_kind_t kind = TM_WORKER_ALONE;
  TM_RETURN_IF_ERROR(worker_status(tm_worker_kind(worker, &kind), "worker kind"));
  int slot = -1;
  std::unique_ptr<WarmStage> warm;
  std::optional<Warmup> warmup;
  if (kind == TM_WORKER_STANDBY) {
    TM_ASSIGN_OR_RETURN(warmup, warm_up(cl, worker));
    TM_RETURN_IF_ERROR(
        worker_status(tm_worker_wait_promotion(worker, kPromotionWaitS, &slot), "standby"));
    if (warmup) {
      TM_ASSIGN_OR_RETURN(warm, warmup->take(slot));
    }
  }
  std::unique_ptr<Trainer> trainer;
  if (warm) {
    held = std::move(warm->comm);
    trainer = std::move(warm->trainer);
  } else {
    TM_ASSIGN_OR_RETURN(held, kind == TM_WORKER_STANDBY
                                  ? StageComm::create_standby(cl.dp, cl.pp, slot)
                                  : StageComm::create(cl.dp, cl.pp));
    TrainOptions options = cl.train;
    if (kind == TM_WORKER_STANDBY) options.resume = false;  // its state comes from the job
    TM_ASSIGN_OR_RETURN(trainer, Trainer::create(options, *held));
  }
  for (const StateRegion& r : trainer->state().regions())
    TM_RETURN_IF_ERROR(worker_status(tm_worker_register_buffer(worker, r.name, r.data, r.bytes),
                                     "register state"));
  TM_RETURN_IF_ERROR(held->register_with(worker));
  TM_RETURN_IF_ERROR(
      worker_status(tm_worker_set_rollback(worker, rollback, trainer.get()), "register rollback"));
  if (kind == TM_WORKER_STANDBY) {
    uint64_t resume = 0;
    TM_RETURN_IF_ERROR(worker_status(tm_worker_join(worker, &resume), "join"));
    std::fprintf(stderr, "trainmover-gpt: promoted to slot %d, resuming at step %" PRIu64 "\n",
                 held->topology().slot, resume);
  }
  WorkerHooks hooks(worker, warmup);
  TM_ASSIGN_OR_RETURN(TrainSummary summary,
                      trainer->run(kind == TM_WORKER_ALONE ? nullptr : &hooks));
  const Topology& topo = held->topology();
  if (topo.stage() == topo.pp - 1 && topo.dp_index() == 0) print_summary(cl, *trainer, summary);
  return worker_status(tm_worker_finish(worker), "finish");
}

}  // namespace

int main(int argc, char** argv) {
  CommandLine cl;
  if (auto exit_code = parse_command_line(argc, argv, cl)) return *exit_code;
  tm_worker_t worker = nullptr;
  Status st = worker_status(tm_worker_init(&worker), "connect to the job");
  std::unique_ptr<StageComm> comm;  // outlives the worker
  if (st.ok()) st = train(cl, worker, comm);
  (void)tm_worker_destroy(worker);
  if (st.ok()) return 0;
  // Checkpoints are written under a temporary name and renamed: stopping
  // here leaves every one on disk whole.
  const std::string where = cl.train.checkpoint_dir.empty()
                                ? ""
                                : ", checkpoint at " + cl.train.checkpoint_dir + " intact";
  return fail(Status(st.code(), st.message() + where));
}
