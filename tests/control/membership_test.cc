#include "control/membership.h"

#include <gtest/gtest.h>

namespace trainmover::control {
namespace {

ProcessId proc(int pid) { return {static_cast<uint64_t>(1000 + pid), pid, "host"}; }

TEST(Layout, PlacesSlotsStageMajor) {
  auto l = Layout::create(2, 4).value();
  EXPECT_EQ(l.nslots(), 8);
  EXPECT_EQ(l.pp_index(5), 2);
  EXPECT_EQ(l.dp_index(5), 1);
  EXPECT_EQ(l.slot_of(1, 2), 5);
  EXPECT_EQ(l.role(0), StageRole::kFirst);
  EXPECT_EQ(l.role(3), StageRole::kMiddle);
  EXPECT_EQ(l.role(7), StageRole::kLast);
  EXPECT_EQ(l.roles().size(), 3u);
  EXPECT_EQ(Layout::create(4, 1).value().role(2), StageRole::kNone);
  EXPECT_EQ(Layout::create(1, 2).value().roles().size(), 2u);
}

TEST(Layout, RefusesBadShapes) {
  EXPECT_FALSE(Layout::create(0, 1).ok());
  EXPECT_FALSE(Layout::create(1, -1).ok());
  EXPECT_FALSE(Layout::create(1 << 10, 1 << 10).ok());
}

TEST(Membership, AssignsEachSlotOnce) {
  Membership m(Layout::create(2, 2).value());
  EXPECT_TRUE(m.assign(0, proc(1)).ok());
  Status again = m.assign(0, proc(2));
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("already served by pid 1"), std::string::npos);
  EXPECT_FALSE(m.assign(4, proc(3)).ok());
  EXPECT_FALSE(m.all_served());
  for (int s = 1; s < 4; ++s) ASSERT_TRUE(m.assign(s, proc(10 + s)).ok());
  EXPECT_TRUE(m.all_served());
  EXPECT_EQ(m.slot_of_pid(12), 2);
  EXPECT_EQ(m.slot_of_instance(1001), 0);
  m.vacate(2);
  EXPECT_FALSE(m.slot_of_pid(12));
}

TEST(Membership, ReplicasAreTheOtherServedSlotsOfTheStage) {
  Membership m(Layout::create(3, 2).value());
  for (int s = 0; s < 6; ++s) ASSERT_TRUE(m.assign(s, proc(s + 1)).ok());
  EXPECT_EQ(m.replicas_of(4), (std::vector<int>{3, 5}));
  m.vacate(5);
  EXPECT_EQ(m.replicas_of(4), (std::vector<int>{3}));
  Membership single(Layout::create(1, 2).value());
  ASSERT_TRUE(single.assign(0, proc(1)).ok());
  EXPECT_TRUE(single.replicas_of(0).empty());
}

TEST(Membership, PicksOnlyReadyStandbysForTheRole) {
  Membership m(Layout::create(1, 3).value());
  int a = m.add_standby(proc(20));
  int b = m.add_standby(proc(21));
  EXPECT_FALSE(m.pick_standby(StageRole::kMiddle));
  ASSERT_TRUE(m.set_warmup(a, WarmupState::kWarming, StageRole::kFirst, {}, {}, "").ok());
  EXPECT_FALSE(m.pick_standby(StageRole::kFirst));
  ASSERT_TRUE(m.set_warmup(b, WarmupState::kReady, StageRole::kNone,
                           {StageRole::kFirst, StageRole::kMiddle}, {StageRole::kMiddle}, "")
                  .ok());
  // Warm for a role it is not ready for: refused.
  EXPECT_FALSE(m.set_warmup(b, WarmupState::kReady, StageRole::kNone, {StageRole::kFirst},
                            {StageRole::kLast}, "")
                   .ok());
  EXPECT_EQ(m.pick_standby(StageRole::kMiddle), b);
  EXPECT_FALSE(m.pick_standby(StageRole::kLast));
  EXPECT_FALSE(m.pick_standby(StageRole::kMiddle, {b}));
  EXPECT_EQ(m.usable_standbys(), 2);
  ASSERT_TRUE(
      m.set_warmup(a, WarmupState::kFailed, StageRole::kNone, {}, {}, "replay failed").ok());
  EXPECT_EQ(m.usable_standbys(), 1);
  EXPECT_FALSE(m.set_warmup(a, WarmupState::kReady, StageRole::kNone, {}, {}, "").ok());
}

TEST(Membership, PromotionMovesAStandbyIntoAVacantSlot) {
  Membership m(Layout::create(2, 1).value());
  ASSERT_TRUE(m.assign(0, proc(1)).ok());
  ASSERT_TRUE(m.assign(1, proc(2)).ok());
  int s = m.add_standby(proc(30));
  EXPECT_FALSE(m.promote(s, 1).ok());  // still served
  m.vacate(1);
  ASSERT_TRUE(m.promote(s, 1).ok());
  EXPECT_EQ(m.slot(1).process->pid, 30);
  EXPECT_TRUE(m.standbys().empty());
  EXPECT_FALSE(m.promote(s, 1).ok());
}

TEST(Membership, JsonNamesRolesAndStates) {
  Membership m(Layout::create(1, 2).value());
  ASSERT_TRUE(m.assign(0, proc(1)).ok());
  int s = m.add_standby(proc(9));
  ASSERT_TRUE(
      m.set_warmup(s, WarmupState::kWarming, StageRole::kLast, {StageRole::kFirst}, {}, "").ok());
  m.commit_epoch(3);
  auto j = m.to_json();
  EXPECT_EQ(j["epoch"], 3);
  EXPECT_EQ(j["slots"][0]["role"], "first");
  EXPECT_EQ(j["slots"][1]["process"], nullptr);
  EXPECT_EQ(j["standbys"][0]["state"], "warming");
  EXPECT_EQ(j["standbys"][0]["warming"], "last");
  EXPECT_EQ(j["standbys"][0]["ready_roles"][0], "first");
}

}  // namespace
}  // namespace trainmover::control
