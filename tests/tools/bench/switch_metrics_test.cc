// The figures of a switch round computed from hand-made timestamps, and the
// timestamp records the workers send.
#include "switch_metrics.h"

#include <gtest/gtest.h>

namespace trainmover::bench {
namespace {

constexpr int64_t kT0 = 1'000'000'000;

int64_t at_ms(double ms) { return kT0 + static_cast<int64_t>(ms * 1e6); }

SwitchRoundPlan plan_of(SwitchMode mode, SwitchImpl impl, int nranks, int victim) {
  SwitchRoundPlan plan;
  plan.mode = mode;
  plan.impl = impl;
  plan.nranks = nranks;
  plan.victim = victim;
  return plan;
}

SwitchRecord record_at_t0() {
  SwitchRecord r;
  r.t0 = kT0;
  return r;
}

TEST(SwitchMetrics, RingNeighbours) {
  EXPECT_EQ(ring_neighbours(8, 4), (std::vector<int>{3, 5}));
  EXPECT_EQ(ring_neighbours(8, 0), (std::vector<int>{7, 1}));
  EXPECT_EQ(ring_neighbours(2, 1), (std::vector<int>{0}));
}

// What a process reports of its links: opened, closed.
Stamps links(int64_t opened, int64_t closed) {
  return {{"links_opened_count", opened}, {"links_closed_count", closed}};
}

void add(Stamps& to, const Stamps& more) { to.insert(more.begin(), more.end()); }

TEST(SwitchMetrics, PlannedDeltaTakesTheDeltaForSwitchoverAndEveryoneForTheRest) {
  SwitchRoundPlan plan = plan_of(SwitchMode::kPlanned, SwitchImpl::kDelta, 4, 2);
  SwitchRecord r = record_at_t0();
  r.view_published = at_ms(-50);
  r.stamps[0] = {{"woke", at_ms(9)}, {"ready", at_ms(9.5)}, {"first", at_ms(11)}};
  r.stamps[1] = {{"prepared", at_ms(-45)},
                 {"woke", at_ms(0)},
                 {"ready", at_ms(1)},
                 {"first", at_ms(10)},
                 {"cpu_ns", 200'000}};
  r.stamps[2] = {{"woke", at_ms(0)}, {"ready", at_ms(20)}};  // the leaver
  r.stamps[3] = {{"prepared", at_ms(-40)},
                 {"woke", at_ms(0)},
                 {"ready", at_ms(2)},
                 {"first", at_ms(10)},
                 {"cpu_ns", 300'000}};
  r.stamps[4] = {{"view", at_ms(-49)}, {"prepared", at_ms(-47)}, {"linked", at_ms(-47)},
                 {"woke", at_ms(0.5)}, {"ready", at_ms(3)},      {"first", at_ms(10)},
                 {"cpu_ns", 100'000}};
  add(r.stamps[0], links(0, 0));
  add(r.stamps[1], links(1, 1));
  add(r.stamps[2], links(0, 2));
  add(r.stamps[3], links(1, 1));
  add(r.stamps[4], links(2, 0));
  auto m = compute_switch_metrics(plan, r);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->at("links_opened"), 4);  // summed over every live process
  EXPECT_EQ(m->at("links_closed"), 4);
  EXPECT_NEAR(m->at("switchover_s"), 0.003, 1e-9);      // slots 1, 3 and the standby
  EXPECT_NEAR(m->at("switchover_all_s"), 0.020, 1e-9);  // the leaver too
  EXPECT_NEAR(m->at("switch_local_s"), 0.0025, 1e-9);   // the standby: 0.5 -> 3
  EXPECT_NEAR(m->at("switch_cpu_s"), 0.0003, 1e-9);     // slot 3's threads
  EXPECT_NEAR(m->at("first_collective_s"), 0.011, 1e-9);
  EXPECT_NEAR(m->at("join_connect_s"), 0.002, 1e-9);
  EXPECT_NEAR(m->at("prepare_s"), 0.010, 1e-9);  // slot 3 prepared 10 ms after publication
  EXPECT_EQ(m->count("detection_s"), 0u);
}

TEST(SwitchMetrics, UnexpectedRebuildCountsEverySurvivor) {
  SwitchRoundPlan plan = plan_of(SwitchMode::kUnexpected, SwitchImpl::kRebuild, 3, 0);
  SwitchRecord r = record_at_t0();
  r.stamps[1] = {{"detect", at_ms(1)},
                 {"view", at_ms(2)},
                 {"ready", at_ms(7)},
                 {"first", at_ms(8)},
                 {"cpu_ns", 2'000'000}};
  r.stamps[2] = {{"detect", at_ms(1.5)},
                 {"view", at_ms(2)},
                 {"ready", at_ms(6)},
                 {"first", at_ms(8)},
                 {"cpu_ns", 1'000'000}};
  r.stamps[3] = {{"view", at_ms(2)},
                 {"ready", at_ms(5)},
                 {"linked", at_ms(5)},
                 {"first", at_ms(8.5)},
                 {"cpu_ns", 1'500'000}};
  add(r.stamps[1], links(2, 2));
  add(r.stamps[2], links(2, 2));
  add(r.stamps[3], links(2, 0));
  auto m = compute_switch_metrics(plan, r);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->at("links_opened"), 6);
  EXPECT_EQ(m->at("links_closed"), 4);  // the killed slot 0 reports nothing
  EXPECT_NEAR(m->at("switchover_s"), 0.007, 1e-9);
  EXPECT_NEAR(m->at("first_collective_s"), 0.0085, 1e-9);
  EXPECT_NEAR(m->at("detection_s"), 0.0015, 1e-9);  // slots 2 and 1 neighbour slot 0
  EXPECT_NEAR(m->at("detection_all_s"), 0.0015, 1e-9);
  EXPECT_NEAR(m->at("switch_local_s"), 0.005, 1e-9);
  EXPECT_NEAR(m->at("join_connect_s"), 0.003, 1e-9);
  EXPECT_NEAR(m->at("switch_cpu_s"), 0.002, 1e-9);
}

TEST(SwitchMetrics, AMissingTimestampIsNamed) {
  SwitchRoundPlan plan = plan_of(SwitchMode::kUnexpected, SwitchImpl::kDelta, 3, 1);
  SwitchRecord r = record_at_t0();
  r.stamps[0] = {{"detect", at_ms(1)}, {"view", at_ms(2)}, {"ready", at_ms(3)}};
  auto m = compute_switch_metrics(plan, r);
  ASSERT_FALSE(m.ok());
  // Slot 2, a neighbour of the victim, has not even reported its switch.
  EXPECT_NE(m.status().message().find("slot 2 reported no 'ready' timestamp"), std::string::npos)
      << m.status().message();
}

TEST(SwitchMetrics, AMissingLinkCountIsNamed) {
  SwitchRoundPlan plan = plan_of(SwitchMode::kUnexpected, SwitchImpl::kRebuild, 3, 0);
  SwitchRecord r = record_at_t0();
  for (int who = 1; who <= 3; ++who) {
    r.stamps[who] = {{"detect", at_ms(1)}, {"view", at_ms(2)},  {"ready", at_ms(3)},
                     {"linked", at_ms(3)}, {"first", at_ms(4)}, {"cpu_ns", 1}};
    if (who != 2) add(r.stamps[who], links(2, 2));
  }
  auto m = compute_switch_metrics(plan, r);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("slot 2 reported no 'links_opened_count'"), std::string::npos)
      << m.status().message();
}

TEST(SwitchStamps, RoundTripAndRejectMalformed) {
  Stamps s = {{"ready", 12}, {"view", 3}};
  auto back = parse_stamps(encode_stamps(s));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back.value(), s);
  EXPECT_FALSE(parse_stamps("ready").ok());
  EXPECT_FALSE(parse_stamps("=4").ok());
  EXPECT_FALSE(parse_stamps("ready=-4").ok());
  EXPECT_FALSE(parse_stamps("ready=x").ok());
}

}  // namespace
}  // namespace trainmover::bench
