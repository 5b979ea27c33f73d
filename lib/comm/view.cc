#include "comm/view.h"

#include <algorithm>
#include <map>
#include <set>

namespace trainmover {

Status View::validate() const {
  std::set<uint64_t> seen;
  for (int s = 0; s < nslots(); ++s) {
    uint64_t id = slots[static_cast<size_t>(s)].instance_id;
    if (id == 0)
      return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", epoch, ": slot ", s,
                   " has no process");
    if (!seen.insert(id).second) {
      return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", epoch,
                   ": a process serves two slots (slot ", s, ")");
    }
  }
  for (auto [a, b] : extra_pairs) {
    if (a < 0 || b < 0 || a >= nslots() || b >= nslots() || a == b) {
      return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", epoch, ": bad slot pair (", a, ", ", b,
                   ")");
    }
  }
  return Status::Ok();
}

std::vector<std::pair<int, int>> linked_pairs(const View& view, const AlgorithmPolicy& policy) {
  std::vector<std::pair<int, int>> algorithm = algorithm_pairs(policy, view.nslots());
  std::set<std::pair<int, int>> pairs(algorithm.begin(), algorithm.end());
  for (auto [a, b] : view.extra_pairs) {
    if (a != b) pairs.insert({std::min(a, b), std::max(a, b)});
  }
  return {pairs.begin(), pairs.end()};
}

namespace {

// A link as both the slots and the processes at its ends.
struct LinkId {
  int low_slot, high_slot;
  uint64_t low_process, high_process;
  auto operator<=>(const LinkId&) const = default;
};

std::set<LinkId> links_of(const View& view, const AlgorithmPolicy& policy) {
  std::set<LinkId> links;
  for (auto [a, b] : linked_pairs(view, policy)) {
    links.insert({a, b, view.slots[static_cast<size_t>(a)].instance_id,
                  view.slots[static_cast<size_t>(b)].instance_id});
  }
  return links;
}

}  // namespace

Result<std::vector<ProcessDelta>> delta(const View& from, const View& to,
                                        const AlgorithmPolicy& policy) {
  TM_RETURN_IF_ERROR(from.validate());
  TM_RETURN_IF_ERROR(to.validate());
  if (from.nslots() != to.nslots()) {
    return error(TM_ERROR_INVALID_ARGUMENT, "views of ", from.nslots(), " and ", to.nslots(),
                 " slots: a switch keeps the number of slots");
  }
  if (to.epoch <= from.epoch) {
    return error(TM_ERROR_INVALID_ARGUMENT, "the new view's epoch ", to.epoch, " is not after ",
                 from.epoch);
  }
  std::set<LinkId> old_links = links_of(from, policy);
  std::set<LinkId> new_links = links_of(to, policy);
  std::map<uint64_t, ProcessDelta> by_process;
  auto entry = [&](uint64_t id) -> ProcessDelta& {
    ProcessDelta& d = by_process[id];
    d.instance_id = id;
    return d;
  };
  for (const LinkId& l : old_links) {
    if (new_links.count(l)) continue;
    entry(l.low_process).close.push_back(l.high_slot);
    entry(l.high_process).close.push_back(l.low_slot);
  }
  for (const LinkId& l : new_links) {
    if (old_links.count(l)) continue;
    entry(l.low_process).open.push_back(l.high_slot);
    entry(l.high_process).open.push_back(l.low_slot);
  }
  std::vector<ProcessDelta> out;
  for (auto& [id, d] : by_process) {
    std::sort(d.open.begin(), d.open.end());
    std::sort(d.close.begin(), d.close.end());
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace trainmover
