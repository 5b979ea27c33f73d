#include "comm/plan_executor.h"

#include <cstring>

#include "comm/datatype.h"
#include "comm/reduce.h"

namespace trainmover {

using transport::RequestState;

namespace {
// A request fails when its link dies, or when the communicator cancelled it
// (its link then still works).
Status failure_of(const transport::Link& link) {
  if (link.failed()) return link.status();
  return Status(TM_ERROR_PEER_FAILED, "operation cancelled after the communicator failed");
}
}  // namespace

void PlanExecutor::start(const CollectivePlan& plan, const PlanBuffers& buffers,
                         const std::vector<transport::Link*>& links, uint64_t tag,
                         StagingPool& staging, size_t max_outstanding) {
  plan_ = &plan;
  buf_ = buffers;
  elem_ = datatype_size(buffers.type);
  links_ = &links;
  tag_ = tag;
  staging_ = &staging;
  max_outstanding_ = max_outstanding;
  status_ = Status::Ok();
  send_handles_.resize(plan.sends.size());
  recv_handles_.resize(plan.recvs.size());
  recv_slot_.assign(plan.recvs.size(), -1);
  sends_posted_ = sends_done_ = recvs_posted_ = recvs_done_ = 0;
  if (plan.copy_count > 0 && in_ptr(plan.copy_from) != out_ptr(plan.copy_to)) {
    std::memmove(out_ptr(plan.copy_to), in_ptr(plan.copy_from), plan.copy_count * elem_);
  }
}

std::byte* PlanExecutor::in_ptr(size_t elems) const {
  return const_cast<std::byte*>(buf_.input) + elems * elem_;
}
std::byte* PlanExecutor::out_ptr(size_t elems) const { return buf_.output + elems * elem_; }

PlanExecutor::State PlanExecutor::poll(bool& progressed) {
  progressed = false;
  while (status_.ok()) {
    bool completed = complete_recvs();
    completed = complete_sends() || completed;
    progressed = progressed || completed;
    // Posting can complete a request at once (its data already waits in the
    // socket), with no event to come: go round again whenever anything moved.
    bool posted = post_sends();
    posted = post_recvs() || posted;
    if (!completed && !posted) break;
  }
  if (!status_.ok()) return State::kFailed;
  bool done = sends_done_ == plan_->sends.size() && recvs_done_ == plan_->recvs.size();
  return done ? State::kDone : State::kRunning;
}

bool PlanExecutor::settle() {
  if (plan_ == nullptr) return false;
  while (status_.ok() && (complete_recvs() || complete_sends())) {
  }
  return status_.ok() && sends_done_ == plan_->sends.size() && recvs_done_ == plan_->recvs.size();
}

bool PlanExecutor::complete_recvs() {
  bool any = false;
  while (recvs_done_ < recvs_posted_) {
    const PlanRecv& recv = plan_->recvs[recvs_done_];
    transport::Link& from = link(recv.peer);
    RequestState st = from.test(recv_handles_[recvs_done_]);
    if (st == RequestState::kFailed) {
      status_ = failure_of(from);
      return any;
    }
    if (st != RequestState::kDone) break;
    // A combine overwrites output that an earlier send reads.
    if (recv.after_send >= 0 && static_cast<size_t>(recv.after_send) >= sends_done_) break;
    apply(recv, recv_slot_[recvs_done_]);
    ++recvs_done_;
    any = true;
  }
  return any;
}

void PlanExecutor::apply(const PlanRecv& recv, int staging_slot) {
  switch (recv.action) {
    case RecvAction::kIntoOutput:
      return;
    case RecvAction::kReduceToStaging: {
      std::byte* s = staging_->data(staging_slot);
      reduce(buf_.op, buf_.type, s, s, in_ptr(recv.input_offset), recv.count);
      return;  // the slot is released when the forwarding send completes
    }
    case RecvAction::kReduceToOutput: {
      std::byte* out = out_ptr(recv.offset);
      reduce(buf_.op, buf_.type, out, staging_->data(staging_slot), in_ptr(recv.input_offset),
             recv.count);
      if (plan_->divide_final) divide(buf_.type, out, recv.count, buf_.nslots);
      staging_->release(staging_slot);
      return;
    }
    case RecvAction::kCombineAfterOutput:
    case RecvAction::kCombineBeforeOutput: {
      std::byte* out = out_ptr(recv.offset);
      const std::byte* theirs = staging_->data(staging_slot);
      if (recv.action == RecvAction::kCombineAfterOutput) {
        reduce(buf_.op, buf_.type, out, out, theirs, recv.count);
      } else {
        reduce(buf_.op, buf_.type, out, theirs, out, recv.count);
      }
      if (recv.final && plan_->divide_final) divide(buf_.type, out, recv.count, buf_.nslots);
      staging_->release(staging_slot);
      return;
    }
  }
}

bool PlanExecutor::complete_sends() {
  bool any = false;
  while (sends_done_ < sends_posted_) {
    const PlanSend& s = plan_->sends[sends_done_];
    transport::Link& to = link(s.peer);
    RequestState st = to.test(send_handles_[sends_done_]);
    if (st == RequestState::kFailed) {
      status_ = failure_of(to);
      return any;
    }
    if (st != RequestState::kDone) break;
    if (s.source == PlanBuffer::kStaging)
      staging_->release(recv_slot_[static_cast<size_t>(s.after_recv)]);
    ++sends_done_;
    any = true;
  }
  return any;
}

bool PlanExecutor::post_sends() {
  size_t before = sends_posted_;
  while (sends_posted_ < plan_->sends.size() && sends_posted_ - sends_done_ < max_outstanding_) {
    const PlanSend& s = plan_->sends[sends_posted_];
    if (s.after_recv >= 0 && static_cast<size_t>(s.after_recv) >= recvs_done_) break;
    const std::byte* data = nullptr;
    switch (s.source) {
      case PlanBuffer::kInput:
        data = in_ptr(s.offset);
        break;
      case PlanBuffer::kOutput:
        data = out_ptr(s.offset);
        break;
      case PlanBuffer::kStaging:
        data = staging_->data(recv_slot_[static_cast<size_t>(s.after_recv)]);
        break;
    }
    send_handles_[sends_posted_] = link(s.peer).post_send(tag_, {data, s.count * elem_});
    ++sends_posted_;
  }
  return sends_posted_ != before;
}

bool PlanExecutor::post_recvs() {
  size_t before = recvs_posted_;
  while (recvs_posted_ < plan_->recvs.size() && recvs_posted_ - recvs_done_ < max_outstanding_) {
    const PlanRecv& r = plan_->recvs[recvs_posted_];
    std::byte* dst = nullptr;
    if (r.action == RecvAction::kIntoOutput) {
      dst = out_ptr(r.offset);
    } else {
      int slot = staging_->acquire();
      if (slot < 0) break;  // wait for a forwarding send or a reduction to free one
      recv_slot_[recvs_posted_] = slot;
      dst = staging_->data(slot);
    }
    recv_handles_[recvs_posted_] = link(r.peer).post_recv(tag_, {dst, r.count * elem_});
    ++recvs_posted_;
  }
  return recvs_posted_ != before;
}

int PlanExecutor::waiting_on() const {
  if (plan_ == nullptr) return -1;
  if (recvs_done_ < plan_->recvs.size()) return plan_->recvs[recvs_done_].peer;
  if (sends_done_ < plan_->sends.size()) return plan_->sends[sends_done_].peer;
  return -1;
}

void PlanExecutor::abandon() {
  if (staging_ != nullptr) staging_->reset();
  plan_ = nullptr;
}

}  // namespace trainmover
