#include "trainer.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>

#include "checkpoint.h"

namespace trainmover::gpt {
namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Result<std::unique_ptr<Trainer>> Trainer::create(const TrainOptions& options, StageComm& comm) {
  TM_RETURN_IF_ERROR(validate(options.shape));
  if (options.micro_batches < 1 || options.batch % options.micro_batches != 0)
    return error(TM_ERROR_INVALID_ARGUMENT, "--batch (", options.batch,
                 ") must be a multiple of --micro-batches (", options.micro_batches, ")");
  const Topology& topo = comm.topology();
  TM_ASSIGN_OR_RETURN(StageSpan span, stage_span(options.shape, topo.stage(), topo.pp));
  std::string path = options.data_path;
  if (path.empty()) {
    TM_ASSIGN_OR_RETURN(path, default_corpus_path(options.shape.seq_len + 1));
  }
  TM_ASSIGN_OR_RETURN(Corpus corpus, Corpus::load(path, options.shape.seq_len));
  auto trainer = std::make_unique<Trainer>(Key(), options, comm, span, std::move(corpus));
  if (options.resume) TM_RETURN_IF_ERROR(trainer->restore_checkpoint());
  trainer->start_step_ = trainer->state_.counters.step;
  return trainer;
}

Trainer::Trainer(Key, const TrainOptions& options, StageComm& comm, const StageSpan& span,
                 Corpus corpus)
    : options_(options),
      comm_(comm),
      stage_(options.shape, span, options.batch / options.micro_batches),
      corpus_(std::move(corpus)),
      state_(options.shape, stage_.layout(), options.seed),
      grads_(stage_.layout().total(), 0.0f),
      caches_(options.micro_batches) {
  for (auto& cache : caches_) stage_.resize(cache);
  for (auto* v : {&act_in_, &grad_out_, &grad_in_}) v->assign(stage_.activation_count(), 0.0f);
}

bool Trainer::reporter() const { return stage_.span().last() && comm_.topology().dp_index() == 0; }

Status Trainer::restore_checkpoint() {
  if (options_.checkpoint_dir.empty())
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "no checkpoint directory (--checkpoint-dir) to restore from");
  const double start = now_s();  // the load's time is the stop-restart baseline's state transfer
  TM_ASSIGN_OR_RETURN(uint64_t latest,
                      latest_checkpoint_step(options_.checkpoint_dir, stage_.span().stage));
  int64_t agreed = static_cast<int64_t>(latest);
  TM_RETURN_IF_ERROR(comm_.world_allreduce(&agreed, 1, TM_INT64, TM_MIN));
  if (agreed == 0) {
    if (reporter())
      std::fprintf(stderr, "trainmover-gpt: no checkpoint in %s; going on from step %" PRIu64 "\n",
                   options_.checkpoint_dir.c_str(), state_.counters.step);
    return Status::Ok();
  }
  const std::string path =
      checkpoint_path(options_.checkpoint_dir, stage_.span().stage, static_cast<uint64_t>(agreed));
  TM_RETURN_IF_ERROR(load_checkpoint(path, options_.shape, stage_.span(), options_.batch, state_));
  if (reporter())
    std::fprintf(stderr, "trainmover-gpt: resumed at step %" PRIu64 " from %s in %.3f ms\n",
                 state_.counters.step, options_.checkpoint_dir.c_str(), (now_s() - start) * 1e3);
  return Status::Ok();
}

Result<uint64_t> Trainer::rollback_in_place(uint64_t at_most) {
  if (options_.checkpoint_dir.empty())
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "a rollback needs a checkpoint directory (--checkpoint-dir)");
  TM_ASSIGN_OR_RETURN(uint64_t latest, latest_checkpoint_step(options_.checkpoint_dir,
                                                              stage_.span().stage, at_most));
  if (latest == 0) {
    TrainState initial(options_.shape, stage_.layout(), options_.seed);
    state_.params = initial.params;  // same sizes: copied in place, the buffers stay
    state_.adam_m = initial.adam_m;
    state_.adam_v = initial.adam_v;
    state_.counters = initial.counters;
  } else {
    TM_RETURN_IF_ERROR(
        load_checkpoint(checkpoint_path(options_.checkpoint_dir, stage_.span().stage, latest),
                        options_.shape, stage_.span(), options_.batch, state_));
  }
  return state_.counters.step;
}

void Trainer::sample(int micro, StageCache<float>& cache) const {
  const int rows = options_.batch / options_.micro_batches;
  corpus_.sample(state_.counters.seed, state_.counters.step, comm_.topology().dp_index(),
                 micro * rows, rows, cache.tokens.empty() ? nullptr : cache.tokens.data(),
                 cache.targets.empty() ? nullptr : cache.targets.data());
}

Result<double> Trainer::step(bool report) {
  TM_RETURN_IF_ERROR(comm_.iteration_begin());
  Result<double> loss = step_body(report);
  Status ended = comm_.iteration_end();
  if (loss.ok() && !ended.ok()) return ended;
  return loss;
}

bool Trainer::reports(uint64_t n, uint64_t first) const {
  return n == first + 1 || n == options_.steps ||
         (options_.log_every > 0 && n % static_cast<uint64_t>(options_.log_every) == 0);
}

Status Trainer::warm_up(uint64_t iterations) {
  for (uint64_t n = 1; n <= iterations; ++n) TM_RETURN_IF_ERROR(step(reports(n, 0)).status());
  return Status::Ok();
}

Result<double> Trainer::step_body(bool report) {
  const StageSpan& span = stage_.span();
  const size_t acts = stage_.activation_count();
  std::fill(grads_.begin(), grads_.end(), 0.0f);
  double loss_sum = 0;
  for (int i = 0; i < options_.micro_batches; ++i) {
    sample(i, caches_[i]);
    if (!span.first()) TM_RETURN_IF_ERROR(comm_.recv_prev(act_in_.data(), acts, TM_FLOAT32));
    loss_sum += stage_.forward(state_.params.data(), act_in_.data(), caches_[i]);
    if (!span.last()) TM_RETURN_IF_ERROR(comm_.send_next(caches_[i].out.data(), acts, TM_FLOAT32));
  }
  const float loss_scale =
      1.0f / static_cast<float>(static_cast<int64_t>(options_.batch) * options_.shape.seq_len);
  for (int i = options_.micro_batches - 1; i >= 0; --i) {
    if (!span.last()) TM_RETURN_IF_ERROR(comm_.recv_next(grad_out_.data(), acts, TM_FLOAT32));
    stage_.backward(state_.params.data(), caches_[i], grad_out_.data(), loss_scale, grads_.data(),
                    grad_in_.data());
    if (!span.first()) TM_RETURN_IF_ERROR(comm_.send_prev(grad_in_.data(), acts, TM_FLOAT32));
  }
  TM_RETURN_IF_ERROR(comm_.dp_allreduce(grads_.data(), grads_.size(), TM_FLOAT32, TM_AVG));
  adamw_update(options_.adamw, stage_.layout(), state_.counters.step + 1, grads_.data(), state_);
  state_.counters.step += 1;
  state_.counters.data_position += options_.batch;
  double loss = loss_sum * loss_scale;
  if (report && span.last()) TM_RETURN_IF_ERROR(comm_.dp_allreduce(&loss, 1, TM_FLOAT64, TM_AVG));
  return loss;
}

Result<uint64_t> Trainer::model_hash() {
  const StageSpan& span = stage_.span();
  uint64_t hash = kFnvOffset;
  if (!span.first()) TM_RETURN_IF_ERROR(comm_.recv_prev(&hash, 1, TM_INT64));
  hash = state_.param_hash(hash);
  if (!span.last()) TM_RETURN_IF_ERROR(comm_.send_next(&hash, 1, TM_INT64));
  // DP replicas must hold the same parameters: a cheap check of that.
  int64_t low = static_cast<int64_t>(hash), high = low;
  TM_RETURN_IF_ERROR(comm_.dp_allreduce(&low, 1, TM_INT64, TM_MIN));
  TM_RETURN_IF_ERROR(comm_.dp_allreduce(&high, 1, TM_INT64, TM_MAX));
  if (low != high)
    return error(TM_ERROR_INTERNAL, "the DP replicas of stage ", span.stage,
                 " hold different parameters");
  return hash;
}

Status Trainer::maybe_checkpoint(bool at_end) {
  const uint64_t every = options_.checkpoint_every, step = state_.counters.step;
  if (options_.checkpoint_dir.empty() || comm_.topology().dp_index() != 0) return Status::Ok();
  if (!at_end && (every == 0 || step % every != 0)) return Status::Ok();
  if (at_end && every != 0 && step % every == 0) return Status::Ok();  // just written
  return save_checkpoint(options_.checkpoint_dir, options_.shape, stage_.span(), state_);
}

Result<TrainSummary> Trainer::run(StepHooks* hooks) {
  TrainSummary summary;
  summary.first_step = state_.counters.step;
  const double start = now_s();
  while (state_.counters.step < options_.steps) {
    if (hooks != nullptr) {
      TM_ASSIGN_OR_RETURN(uint64_t run_step, hooks->boundary(state_.counters.step));
      if (run_step != state_.counters.step)
        return error(TM_ERROR_INTERNAL, "the runtime restored step ", run_step,
                     " but the state holds step ", state_.counters.step);
    }
    const uint64_t n = state_.counters.step + 1;
    // Every rank of the job must agree on it, so it counts from the step the
    // job started at, not from where this process started (a joiner's).
    const bool report = reports(n, start_step_);
    const double t0 = now_s();
    Result<double> stepped = step(report);
    if (!stepped.ok() && hooks != nullptr) {
      TM_ASSIGN_OR_RETURN(uint64_t resume, hooks->recover(stepped.status()));
      if (resume != state_.counters.step)
        return error(TM_ERROR_INTERNAL, "the runtime resumed at step ", resume,
                     " but the state holds step ", state_.counters.step);
      continue;
    }
    TM_ASSIGN_OR_RETURN(double loss, std::move(stepped));
    const double dt = now_s() - t0;
    if (n == summary.first_step + 1) summary.first_loss = loss;
    summary.last_loss = loss;
    if (report && reporter() && options_.log_every > 0)
      std::fprintf(stderr, "trainmover-gpt: step %" PRIu64 "/%" PRIu64 " loss %.4f time %.2f ms\n",
                   n, options_.steps, loss, dt * 1e3);
    TM_RETURN_IF_ERROR(maybe_checkpoint(false));
  }
  const uint64_t ran = state_.counters.step - summary.first_step;
  summary.mean_step_s = ran > 0 ? (now_s() - start) / static_cast<double>(ran) : 0.0;
  summary.end_step = state_.counters.step;
  TM_RETURN_IF_ERROR(maybe_checkpoint(true));
  TM_ASSIGN_OR_RETURN(summary.param_hash, model_hash());
  return summary;
}

}  // namespace trainmover::gpt
