#include "comm/collective_op.h"

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

// Every peer of the plan needs a link, and a dead one fails the operation
// only if the plan uses it: a neighbour that left after its part (the root
// of a broadcast that just ended for it) is needed by no later message. A
// link that died before delivering what the plan receives fails in the
// executor.
bool CollectiveOp::start() {
  started_ = true;
  peers_.set_progress(params_.number, -1);
  if (peers_.failed()) return finish(peers_.failure());
  links_.assign(static_cast<size_t>(peers_.nslots()), nullptr);
  auto attach = [&](int slot) -> bool {
    transport::Link*& link = links_[static_cast<size_t>(slot)];
    if (link != nullptr) return true;
    link = peers_.link(slot);
    if (link == nullptr) {
      finish(error(TM_ERROR_INTERNAL, "no link to slot ", slot, " for ", params_.name));
      return false;
    }
    if (link->failed()) {
      peers_.fail(link->status());
      finish(peers_.failure());
      return false;
    }
    return true;
  };
  for (const PlanSend& s : params_.plan->sends) {
    if (!attach(s.peer)) return true;
  }
  for (const PlanRecv& r : params_.plan->recvs) {
    if (!attach(r.peer)) return true;
  }
  watchdog_.start(Clock::now());
  executor_.start(*params_.plan, params_.buffers, links_, params_.tag, staging_, max_outstanding_);
  return false;
}

bool CollectiveOp::poll() {
  if (!started_ && start()) return true;
  if (peers_.failed()) {
    // An abort that follows this operation's last message on a link is read
    // in the same dispatch: the operation, all of whose messages completed,
    // has its whole result. Nothing new is posted after the failure.
    return finish(executor_.settle() ? Status::Ok() : peers_.failure());
  }
  bool progressed = false;
  PlanExecutor::State state = executor_.poll(progressed);
  Clock::time_point now = Clock::now();
  if (progressed) watchdog_.progressed(now);
  peers_.set_progress(params_.number,
                      state == PlanExecutor::State::kRunning ? executor_.waiting_on() : -1);
  switch (state) {
    case PlanExecutor::State::kDone:
      return finish(Status::Ok());
    case PlanExecutor::State::kFailed:
      peers_.fail(executor_.status());
      return finish(peers_.failure());
    case PlanExecutor::State::kRunning:
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
