// Building blocks of the plans over power-of-two partners (recursive
// doubling, comm/doubling_plan.h; recursive halving, comm/halving_plan.h):
// segmenting a range, appending sends and receives, and the fold that
// brings the slots beyond the largest power of two in and out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/collective_plan.h"

namespace trainmover::plan_steps {

int largest_power_of_two_at_most(int n);

struct Segment {
  size_t offset = 0;
  size_t count = 0;
};

// [offset, offset + count) cut into messages of at most `segment_elems`.
std::vector<Segment> segments(size_t count, size_t segment_elems, size_t offset = 0);

inline int64_t last_index(const std::vector<PlanRecv>& v) {
  return static_cast<int64_t>(v.size()) - 1;
}
inline int64_t last_index(const std::vector<PlanSend>& v) {
  return static_cast<int64_t>(v.size()) - 1;
}

void add_recv_into_output(CollectivePlan& plan, int peer, size_t offset, size_t count);
void add_send_of_output(CollectivePlan& plan, int peer, const Segment& sg, int64_t after_recv);
// A combine of a segment of output with what `peer` sends, the lower slot's
// value first; `after_send` (or -1) is the send that must have read that
// output first.
void add_combine(CollectivePlan& plan, int slot, int peer, const Segment& sg, int64_t after_send);

// A slot s in [p, N): its input goes to s - p in `segs`, the result comes
// back into output in the same segments.
void plan_extra_slot(CollectivePlan& plan, int partner, const std::vector<Segment>& segs);

}  // namespace trainmover::plan_steps
