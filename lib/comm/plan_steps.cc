#include "comm/plan_steps.h"

#include <algorithm>

namespace trainmover::plan_steps {

int largest_power_of_two_at_most(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

std::vector<Segment> segments(size_t count, size_t segment_elems, size_t offset) {
  std::vector<Segment> out;
  for (size_t at = 0; at < count; at += segment_elems)
    out.push_back({offset + at, std::min(segment_elems, count - at)});
  return out;
}

void add_recv_into_output(CollectivePlan& plan, int peer, size_t offset, size_t count) {
  PlanRecv recv;
  recv.action = RecvAction::kIntoOutput;
  recv.offset = offset;
  recv.count = count;
  recv.peer = peer;
  plan.recvs.push_back(recv);
}

void add_send_of_output(CollectivePlan& plan, int peer, const Segment& sg, int64_t after_recv) {
  PlanSend send;
  send.source = PlanBuffer::kOutput;
  send.offset = sg.offset;
  send.count = sg.count;
  send.after_recv = after_recv;
  send.peer = peer;
  plan.sends.push_back(send);
}

void add_combine(CollectivePlan& plan, int slot, int peer, const Segment& sg, int64_t after_send) {
  PlanRecv recv;
  recv.action = slot < peer ? RecvAction::kCombineAfterOutput : RecvAction::kCombineBeforeOutput;
  recv.offset = sg.offset;
  recv.count = sg.count;
  recv.peer = peer;
  recv.after_send = after_send;
  plan.recvs.push_back(recv);
}

void plan_extra_slot(CollectivePlan& plan, int partner, const std::vector<Segment>& segs) {
  for (const Segment& sg : segs) {
    PlanSend send;
    send.source = PlanBuffer::kInput;
    send.offset = sg.offset;
    send.count = sg.count;
    send.peer = partner;
    plan.sends.push_back(send);
  }
  for (const Segment& sg : segs) add_recv_into_output(plan, partner, sg.offset, sg.count);
}

}  // namespace trainmover::plan_steps
