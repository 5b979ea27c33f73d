#include "comm/group_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace trainmover {

Result<std::vector<std::vector<int>>> split_members(const std::vector<int>& colors,
                                                    const std::vector<int>& keys) {
  if (colors.size() != keys.size()) {
    return error(TM_ERROR_INVALID_ARGUMENT, "split: ", colors.size(), " colors but ", keys.size(),
                 " keys");
  }
  std::map<int, std::vector<std::tuple<int, int>>> by_color;  // color -> (key, parent slot)
  for (size_t s = 0; s < colors.size(); ++s) {
    if (colors[s] >= 0) by_color[colors[s]].emplace_back(keys[s], static_cast<int>(s));
  }
  std::vector<std::vector<int>> groups;
  for (auto& [color, members] : by_color) {
    std::sort(members.begin(), members.end());
    std::vector<int>& g = groups.emplace_back();
    for (auto [key, slot] : members) g.push_back(slot);
  }
  return groups;
}

Result<View> group_view(const View& parent, const std::vector<int>& members) {
  if (members.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "a group has no members");
  std::set<int> seen;
  View v;
  v.epoch = parent.epoch;
  for (int s : members) {
    if (s < 0 || s >= parent.nslots() || !seen.insert(s).second) {
      return error(TM_ERROR_INVALID_ARGUMENT, "group member ", s,
                   " is not a distinct slot of the parent (0..", parent.nslots() - 1, ")");
    }
    v.slots.push_back(parent.slots[static_cast<size_t>(s)]);
  }
  TM_RETURN_IF_ERROR(v.validate());
  return v;
}

std::vector<std::pair<int, int>> dp_pp_pairs(int dp, int pp) {
  std::set<std::pair<int, int>> pairs;
  auto add = [&](int a, int b) {
    if (a != b) pairs.insert({std::min(a, b), std::max(a, b)});
  };
  for (int stage = 0; stage < pp; ++stage) {
    for (int r = 0; r < dp; ++r) {
      int s = stage * dp + r;
      add(s, stage * dp + (r + 1) % dp);   // the stage's DP ring
      if (stage + 1 < pp) add(s, s + dp);  // the next pipeline stage
    }
  }
  return {pairs.begin(), pairs.end()};
}

}  // namespace trainmover
