#include "comm/halving_plan.h"

#include <utility>
#include <vector>

#include "comm/plan_steps.h"

namespace trainmover {
namespace {

using plan_steps::Segment;

struct Range {
  size_t begin = 0;
  size_t end = 0;
};

// One exchange of the halving: the part this slot keeps and the one it gives.
struct Split {
  int peer = -1;
  Range keep;
  Range give;
};

// The output segments the plan's receives wrote so far, each with the index
// of its receive: a send waits for the last receive that wrote what it reads.
class Writers {
 public:
  void add(const Segment& sg, int64_t recv) { written_.push_back({sg, recv}); }
  // The last receive that wrote any element of `sg`, or -1.
  int64_t last_over(const Segment& sg) const {
    for (auto it = written_.rbegin(); it != written_.rend(); ++it) {
      const Segment& w = it->first;
      if (w.offset < sg.offset + sg.count && sg.offset < w.offset + w.count) return it->second;
    }
    return -1;
  }

 private:
  std::vector<std::pair<Segment, int64_t>> written_;
};

std::vector<Segment> segments_of(const Range& r, size_t segment_elems) {
  return plan_steps::segments(r.end - r.begin, segment_elems, r.begin);
}

void send_range(CollectivePlan& plan, int peer, const Range& r, size_t seg, const Writers& w) {
  for (const Segment& sg : segments_of(r, seg))
    plan_steps::add_send_of_output(plan, peer, sg, w.last_over(sg));
}

std::vector<Split> halving_splits(int slot, int p, size_t count) {
  std::vector<Split> splits;
  Range held{0, count};
  for (int bit = 1; bit < p; bit *= 2) {
    const size_t middle = held.begin + (held.end - held.begin) / 2;
    const Range lower{held.begin, middle};
    const Range upper{middle, held.end};
    const bool keeps_lower = (slot & bit) == 0;
    splits.push_back({slot ^ bit, keeps_lower ? lower : upper, keeps_lower ? upper : lower});
    held = splits.back().keep;
  }
  return splits;
}

}  // namespace

void plan_allreduce_halving(CollectivePlan& plan, const PlanGeometry& g, size_t count,
                            bool average) {
  plan.clear();
  plan.divide_final = average && g.nslots > 1;
  const int p = plan_steps::largest_power_of_two_at_most(g.nslots);
  const int r = g.nslots - p;
  const size_t seg = g.segment_elems;
  if (g.slot >= p)
    return plan_steps::plan_extra_slot(plan, g.slot - p, plan_steps::segments(count, seg));
  plan.copy_count = count;
  if (g.nslots == 1) return;
  Writers writers;
  if (g.slot < r) {
    for (const Segment& sg : plan_steps::segments(count, seg)) {
      plan_steps::add_combine(plan, g.slot, g.slot + p, sg, -1);  // nothing has read output yet
      writers.add(sg, plan_steps::last_index(plan.recvs));
    }
  }
  const std::vector<Split> splits = halving_splits(g.slot, p, count);
  for (const Split& split : splits) {
    send_range(plan, split.peer, split.give, seg, writers);
    const bool last = &split == &splits.back();
    for (const Segment& sg : segments_of(split.keep, seg)) {
      // No send reads what it overwrites: a slot sends only the parts it
      // gives away, and those lie outside every part it keeps later.
      plan_steps::add_combine(plan, g.slot, split.peer, sg, -1);
      plan.recvs.back().final = last;
      writers.add(sg, plan_steps::last_index(plan.recvs));
    }
  }
  for (auto split = splits.rbegin(); split != splits.rend(); ++split) {
    send_range(plan, split->peer, split->keep, seg, writers);
    // Output that this split's halving send reads: the peer sends it back
    // only after it has received all of it.
    for (const Segment& sg : segments_of(split->give, seg)) {
      plan_steps::add_recv_into_output(plan, split->peer, sg.offset, sg.count);
      writers.add(sg, plan_steps::last_index(plan.recvs));
    }
  }
  if (g.slot < r) send_range(plan, g.slot + p, Range{0, count}, seg, writers);
}

namespace {

// The blocks slot `slot` gives to `slot ^ bit` and keeps at `bit`, among
// those it holds (owner agrees with it below `bit`), in block order.
void split_blocks(int slot, int bit, int p, int nslots, std::vector<int>& keep,
                  std::vector<int>& give) {
  keep.clear();
  give.clear();
  for (int t = 0; t < nslots; ++t) {
    const int owner = t % p;
    if ((owner ^ slot) % bit != 0) continue;  // not held here
    ((owner ^ slot) & bit ? give : keep).push_back(t);
  }
}

}  // namespace

void plan_reduce_scatter_halving(CollectivePlan& plan, const PlanGeometry& g, size_t recvcount,
                                 bool average) {
  plan.clear();
  plan.divide_final = average && g.nslots > 1;
  const int n = g.nslots;
  const int p = plan_steps::largest_power_of_two_at_most(n);
  const int r = n - p;
  const size_t seg = g.segment_elems;
  const size_t count = recvcount * static_cast<size_t>(n);
  const auto block = [recvcount](int t) {
    return Range{recvcount * static_cast<size_t>(t), recvcount * static_cast<size_t>(t + 1)};
  };
  if (g.slot >= p) {  // its whole input in, its own block back
    for (const Segment& sg : plan_steps::segments(count, seg)) {
      PlanSend send;
      send.source = PlanBuffer::kInput;
      send.offset = sg.offset;
      send.count = sg.count;
      send.peer = g.slot - p;
      plan.sends.push_back(send);
    }
    for (const Segment& sg : segments_of(block(g.slot), seg))
      plan_steps::add_recv_into_output(plan, g.slot - p, sg.offset, sg.count);
    return;
  }
  plan.copy_count = count;
  if (n == 1) return;
  Writers writers;
  if (g.slot < r) {
    for (const Segment& sg : plan_steps::segments(count, seg)) {
      plan_steps::add_combine(plan, g.slot, g.slot + p, sg, -1);
      writers.add(sg, plan_steps::last_index(plan.recvs));
    }
  }
  std::vector<int> keep, give;
  for (int bit = 1; bit < p; bit *= 2) {
    const int peer = g.slot ^ bit;
    split_blocks(g.slot, bit, p, n, keep, give);
    for (int t : give) send_range(plan, peer, block(t), seg, writers);
    for (int t : keep) {
      for (const Segment& sg : segments_of(block(t), seg)) {
        plan_steps::add_combine(plan, g.slot, peer, sg, -1);  // kept blocks were never sent
        plan.recvs.back().final = bit * 2 == p;
        writers.add(sg, plan_steps::last_index(plan.recvs));
      }
    }
  }
  if (g.slot < r) send_range(plan, g.slot + p, block(g.slot + p), seg, writers);
}

}  // namespace trainmover
