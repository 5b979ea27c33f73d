// Groups of a parent communicator as functions of parent slot numbers
// (docs/groups.md): a split by (color, key), and a group's view derived from
// the parent's, so that one parent view (one epoch) fixes every group's.
//
// Replacing the process serving parent slot s changes, in every group that
// contains s, exactly that member, at the parent's epoch; nothing else.
// Pure functions; thread-safe.
#pragma once

#include <utility>
#include <vector>

#include "comm/view.h"
#include "common/status.h"

namespace trainmover {

// MPI_Comm_split's rule: slots of equal color (index: parent slot; < 0: in
// no group) form a group, ordered by (key, parent slot). Groups come in
// increasing color; each lists its parent slots by group slot.
Result<std::vector<std::vector<int>>> split_members(const std::vector<int>& colors,
                                                    const std::vector<int>& keys);

// The view of the group whose group slot i is parent slot members[i]: the
// parent's epoch and, per member, the process the parent view names.
Result<View> group_view(const View& parent, const std::vector<int>& members);

// DP x PP on a parent of dp*pp slots, parent slot = stage * dp + replica:
// the parent's extra pairs are every stage's DP ring and every pipeline
// neighbour pair, so that the parent's links are exactly the links the
// groups use and delta() of a parent view counts them.
std::vector<std::pair<int, int>> dp_pp_pairs(int dp, int pp);

}  // namespace trainmover
