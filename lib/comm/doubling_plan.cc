#include "comm/doubling_plan.h"

#include <algorithm>
#include <set>

#include "comm/plan_steps.h"

namespace trainmover {
namespace {

using plan_steps::add_combine;
using plan_steps::add_recv_into_output;
using plan_steps::add_send_of_output;
using plan_steps::largest_power_of_two_at_most;
using plan_steps::last_index;
using plan_steps::plan_extra_slot;
using plan_steps::Segment;
using plan_steps::segments;

// Output elements [begin, end) to `peer` in segments, once receive
// `after_recv` (or -1) is done; or from it, when `receive`.
void add_range(CollectivePlan& plan, bool receive, int peer, size_t begin, size_t end,
               size_t segment_elems, int64_t after_recv) {
  for (const Segment& sg : segments(end - begin, segment_elems)) {
    if (receive) {
      add_recv_into_output(plan, peer, begin + sg.offset, sg.count);
    } else {
      add_send_of_output(plan, peer, {begin + sg.offset, sg.count}, after_recv);
    }
  }
}

}  // namespace

void plan_broadcast_doubling(CollectivePlan& plan, const PlanGeometry& g, size_t count, int root,
                             bool in_place) {
  plan.clear();
  if (g.slot == root && !in_place) plan.copy_count = count;
  if (g.nslots == 1) return;
  const int p = largest_power_of_two_at_most(g.nslots);
  const int r = g.nslots - p;
  const int acting = root < p ? root : root - p;  // the root among [0, p)
  const std::vector<Segment> segs = segments(count, g.segment_elems);
  // The receive that brought each segment here, or -1 (the root has it).
  std::vector<int64_t> have(segs.size(), -1);
  auto receive_all = [&](int from) {
    for (size_t j = 0; j < segs.size(); ++j) {
      add_recv_into_output(plan, from, segs[j].offset, segs[j].count);
      have[j] = last_index(plan.recvs);
    }
  };
  auto send_all = [&](int to) {
    for (size_t j = 0; j < segs.size(); ++j) add_send_of_output(plan, to, segs[j], have[j]);
  };
  if (g.slot >= p) {  // beyond p: the root hands the buffer in, the others get it last
    if (g.slot == root) return send_all(acting);
    return receive_all(g.slot - p);
  }
  if (g.slot == acting && root != acting) receive_all(root);
  const int distance = g.slot ^ acting;
  if (distance != 0) receive_all(g.slot ^ largest_power_of_two_at_most(distance));
  for (int bit = distance == 0 ? 1 : largest_power_of_two_at_most(distance) * 2; bit < p; bit *= 2)
    send_all(g.slot ^ bit);
  if (g.slot < r && g.slot + p != root) send_all(g.slot + p);
}

void plan_allgather_doubling(CollectivePlan& plan, const PlanGeometry& g, size_t sendcount,
                             bool in_place) {
  plan.clear();
  const size_t c = sendcount;
  const auto block = [c](int s) { return c * static_cast<size_t>(s); };
  if (!in_place) {
    plan.copy_count = c;
    plan.copy_to = block(g.slot);
  }
  if (g.nslots == 1) return;
  const int n = g.nslots;
  const int p = largest_power_of_two_at_most(n);
  const int r = n - p;
  const size_t seg = g.segment_elems;
  if (g.slot >= p) {  // beyond p: own block in, every other block back
    add_range(plan, false, g.slot - p, block(g.slot), block(g.slot + 1), seg, -1);
    add_range(plan, true, g.slot - p, block(0), block(g.slot), seg, -1);
    add_range(plan, true, g.slot - p, block(g.slot + 1), block(n), seg, -1);
    return;
  }
  if (g.slot < r)
    add_range(plan, true, g.slot + p, block(g.slot + p), block(g.slot + p + 1), seg, -1);
  // Before the exchange over `bit`, a slot holds the blocks of the `bit`
  // slots that share its higher bits, and of the slots p above them.
  for (int bit = 1; bit < p; bit *= 2) {
    const int peer = g.slot ^ bit;
    const int64_t filled = last_index(plan.recvs);  // every block held so far
    for (bool receive : {false, true}) {
      const int base = (receive ? peer : g.slot) & ~(bit - 1);
      const int high_end = std::min(base + p + bit, n);
      add_range(plan, receive, peer, block(base), block(base + bit), seg, filled);
      if (base + p < high_end)
        add_range(plan, receive, peer, block(base + p), block(high_end), seg, filled);
    }
  }
  if (g.slot < r) {
    const int64_t all = last_index(plan.recvs);
    const int extra = g.slot + p;
    add_range(plan, false, extra, block(0), block(extra), seg, all);
    add_range(plan, false, extra, block(extra + 1), block(n), seg, all);
  }
}

void plan_allreduce_doubling(CollectivePlan& plan, const PlanGeometry& g, size_t count,
                             bool average) {
  plan.clear();
  plan.divide_final = average && g.nslots > 1;
  const int p = largest_power_of_two_at_most(g.nslots);
  const int r = g.nslots - p;
  const std::vector<Segment> segs = segments(count, g.segment_elems);
  if (g.slot >= p) return plan_extra_slot(plan, g.slot - p, segs);
  plan.copy_count = count;
  if (g.nslots == 1) return;
  // The receive whose combine last wrote each segment of output, or -1.
  std::vector<int64_t> written(segs.size(), -1);
  if (g.slot < r) {
    for (size_t j = 0; j < segs.size(); ++j) {
      add_combine(plan, g.slot, g.slot + p, segs[j], -1);  // nothing has read output yet
      written[j] = last_index(plan.recvs);
    }
  }
  for (int bit = 1; bit < p; bit *= 2) {
    const int peer = g.slot ^ bit;
    for (size_t j = 0; j < segs.size(); ++j) {
      add_send_of_output(plan, peer, segs[j], written[j]);
      add_combine(plan, g.slot, peer, segs[j], last_index(plan.sends));
      written[j] = last_index(plan.recvs);
    }
  }
  for (int64_t i : written) {
    if (i >= 0) plan.recvs[static_cast<size_t>(i)].final = true;
  }
  if (g.slot < r) {
    for (size_t j = 0; j < segs.size(); ++j)
      add_send_of_output(plan, g.slot + p, segs[j], written[j]);
  }
}

std::vector<std::pair<int, int>> doubling_pairs(int nslots) {
  std::set<std::pair<int, int>> pairs;
  const int p = largest_power_of_two_at_most(std::max(nslots, 1));
  for (int s = 0; s < nslots - p; ++s) pairs.insert({s, s + p});
  for (int s = 0; s < p; ++s) {
    for (int bit = 1; bit < p; bit *= 2) pairs.insert({std::min(s, s ^ bit), std::max(s, s ^ bit)});
  }
  return {pairs.begin(), pairs.end()};
}

}  // namespace trainmover
