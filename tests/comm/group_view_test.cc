// Groups as functions of parent slots (comm/group_view.h): the split rule,
// and that one parent view replacing slot s replaces s in every group that
// contains it, at the same epoch, while the parent's delta touches only the
// links of s (for DP x PP 2x2 and 2x3).
#include <gtest/gtest.h>

#include <set>

#include "comm/group_view.h"

namespace trainmover {
namespace {

View parent_view(int dp, int pp, uint64_t epoch = 0) {
  View v;
  v.epoch = epoch;
  for (int s = 0; s < dp * pp; ++s)
    v.slots.push_back({"127.0.0.1:" + std::to_string(7000 + s), 100 + static_cast<uint64_t>(s)});
  v.extra_pairs = dp_pp_pairs(dp, pp);
  return v;
}

TEST(GroupView, SplitOrdersByKeyThenParentSlot) {
  auto g = split_members({1, 0, 1, 0, -1, 1}, {5, 0, 5, 1, 0, 0});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g.value(), (std::vector<std::vector<int>>{{1, 3}, {5, 0, 2}}));
  EXPECT_FALSE(split_members({0, 0}, {0}).ok());
}

TEST(GroupView, DpPpPairsAreTheStageRingsAndPipelineNeighbours) {
  // 2x2: stage 0 = {0, 1}, stage 1 = {2, 3}; pipeline 0-2 and 1-3.
  EXPECT_EQ(dp_pp_pairs(2, 2), (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 3}, {2, 3}}));
  // 3 stages of 2: rings {0,1} {2,3} {4,5}; pipeline 0-2 2-4 1-3 3-5.
  EXPECT_EQ(dp_pp_pairs(2, 3).size(), 7u);
}

TEST(GroupView, RejectsBadMembers) {
  View p = parent_view(2, 2);
  EXPECT_FALSE(group_view(p, {}).ok());
  EXPECT_FALSE(group_view(p, {0, 0}).ok());
  EXPECT_FALSE(group_view(p, {0, 4}).ok());
}

class DpPp : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(DpPp, ReplacingAParentSlotReplacesItInEveryGroupAndTouchesOnlyItsLinks) {
  const auto [dp, pp] = GetParam();
  const int n = dp * pp;
  std::vector<int> dp_color(n), dp_key(n), stage_color(n), stage_key(n);
  for (int s = 0; s < n; ++s) {
    dp_color[s] = s / dp;  // DP group: the replicas of one stage
    dp_key[s] = s % dp;
    stage_color[s] = s % dp;  // one pipeline: the stages of one replica
    stage_key[s] = s / dp;
  }
  auto dp_groups = split_members(dp_color, dp_key).value();
  auto pipelines = split_members(stage_color, stage_key).value();
  ASSERT_EQ(dp_groups.size(), static_cast<size_t>(pp));
  ASSERT_EQ(pipelines.size(), static_cast<size_t>(dp));
  View before = parent_view(dp, pp);
  for (int victim = 0; victim < n; ++victim) {
    View after = before;
    after.epoch = 1;
    after.slots[static_cast<size_t>(victim)] = {"127.0.0.1:9999", 999};
    for (const auto& groups : {dp_groups, pipelines}) {
      for (const auto& members : groups) {
        View g0 = group_view(before, members).value(), g1 = group_view(after, members).value();
        EXPECT_EQ(g1.epoch, 1u);
        for (size_t i = 0; i < members.size(); ++i) {
          bool replaced = members[i] == victim;
          EXPECT_EQ(g1.slots[i].instance_id, replaced ? 999u : g0.slots[i].instance_id);
        }
      }
    }
    // The parent's links touching the victim, and nothing else, change.
    std::set<int> neighbours;
    for (auto [a, b] : linked_pairs(before, AlgorithmPolicy{})) {
      if (a == victim) neighbours.insert(b);
      if (b == victim) neighbours.insert(a);
    }
    auto changes = delta(before, after, AlgorithmPolicy{}).value();
    ASSERT_EQ(changes.size(), neighbours.size() + 2) << "victim " << victim;
    for (const ProcessDelta& d : changes) {
      if (d.instance_id == 999u) {
        EXPECT_EQ(std::set<int>(d.open.begin(), d.open.end()), neighbours);
        EXPECT_TRUE(d.close.empty());
      } else if (d.instance_id == 100u + static_cast<uint64_t>(victim)) {
        EXPECT_EQ(std::set<int>(d.close.begin(), d.close.end()), neighbours);
        EXPECT_TRUE(d.open.empty());
      } else {
        EXPECT_EQ(d.open, std::vector<int>{victim});
        EXPECT_EQ(d.close, std::vector<int>{victim});
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, DpPp,
                         ::testing::Values(std::pair{2, 2}, std::pair{2, 3}, std::pair{3, 2},
                                           std::pair{4, 4}));

}  // namespace
}  // namespace trainmover
