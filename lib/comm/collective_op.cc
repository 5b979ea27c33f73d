#include "comm/collective_op.h"

#include <tuple>

namespace trainmover {

void CollectiveOp::prepare(Params params) {
  params_ = std::move(params);
  started_ = false;
  result_ = Status::Ok();
}

bool CollectiveOp::finish(Status status) {
  if (!status.ok()) executor_.abandon();
  result_ = std::move(status);
  peers_.set_progress(params_.number, -1);
  return true;
}

// A ring neighbour's dead link fails the operation only if the plan uses it:
// a neighbour that left after its part (the root of a broadcast that just
// ended for it) is needed by no later message. A link that died before
// delivering what the plan receives fails in the executor.
bool CollectiveOp::start() {
  started_ = true;
  peers_.set_progress(params_.number, -1);
  if (peers_.failed()) return finish(peers_.failure());
  const int n = peers_.nslots();
  transport::Link* next = nullptr;
  transport::Link* prev = nullptr;
  if (n > 1) {
    int next_slot = (peers_.slot() + 1) % n;
    int prev_slot = (peers_.slot() + n - 1) % n;
    next = peers_.link(next_slot);
    prev = peers_.link(prev_slot);
    const bool sends = !params_.plan->sends.empty(), recvs = !params_.plan->recvs.empty();
    for (auto [link, slot, used] :
         {std::tuple{next, next_slot, sends}, std::tuple{prev, prev_slot, recvs}}) {
      if (link == nullptr)
        return finish(error(TM_ERROR_INTERNAL, "no link to ring neighbour slot ", slot));
      if (used && link->failed()) {
        peers_.fail(link->status());
        return finish(peers_.failure());
      }
    }
  }
  watchdog_.start(Clock::now());
  executor_.start(*params_.plan, params_.buffers, next, prev, params_.tag, staging_,
                  max_outstanding_);
  return false;
}

bool CollectiveOp::poll() {
  if (!started_ && start()) return true;
  if (peers_.failed()) return finish(peers_.failure());
  bool progressed = false;
  RingExecutor::State state = executor_.poll(progressed);
  Clock::time_point now = Clock::now();
  if (progressed) watchdog_.progressed(now);
  peers_.set_progress(params_.number,
                      state == RingExecutor::State::kRunning ? executor_.waiting_on() : -1);
  switch (state) {
    case RingExecutor::State::kDone:
      return finish(Status::Ok());
    case RingExecutor::State::kFailed:
      peers_.fail(executor_.status());
      return finish(peers_.failure());
    case RingExecutor::State::kRunning:
      break;
  }
  if (now < watchdog_.deadline()) return false;
  Status timeout =
      watchdog_.expire(now, executor_.waiting_on(), peers_, params_.name, params_.number);
  if (timeout.ok()) return false;  // grace: an abort from the culprit's neighbour may be on its way
  peers_.fail(timeout);
  return finish(peers_.failure());
}

}  // namespace trainmover
