// Groups split from one parent (Communicator::split, the core of
// tm_comm_split), in real processes over real sockets:
// - split by color and key at 1..8 slots: each process's group slot, size
//   and members (an allgather of parent slots) are the ones MPI_Comm_split's
//   rule gives, computed here on its own; allreduce in each group equals the
//   serial reference bit for bit; two splits of one parent run side by side;
//   a group outlives its parent;
// - DP x PP (3 x 2) with a DP group and a PP group per slot: a planned
//   switch of slot 4 through the parent replaces it in both its groups in
//   the parent's epoch; every process counts the links it opened and closed
//   in each communicator, which equal the groups' view deltas (only links
//   that touch slot 4 change), and every result after the switch is
//   bitwise equal to the run without it; three slots replaced in one
//   switch (two in one DP ring, a whole pipeline), bitwise equal too;
// - bad arguments: a color below TM_SPLIT_NOCOLOR fails on every slot,
//   naming the slot; a split on an aborted parent, on a parent this process
//   left, and NULL handles at the C API get clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "comm/endpoint.h"
#include "comm/view_record.h"
#include "support/switching.h"
#include "trainmover/trainmover.h"

namespace trainmover {
namespace {

using testing::complain;
constexpr auto kWait = std::chrono::seconds(20);

// ---- split by color and key ----

// The colors and keys of the test's first split at `n` slots: three colors,
// keys with ties (broken by parent slot) and reversing the order, and the
// last slot of 4 or more in no group.
int color_of(int slot, int n) {
  return n >= 4 && slot == n - 1 ? Communicator::kNoColor : slot % 3;
}
int key_of(int slot) { return (slot * 5) % 3; }

// Written apart from split_members(): slot s's group slot is the number of
// members of its color that come before it in (key, slot) order.
struct Expected {
  int slot = -1;
  std::vector<int> members;  // parent slots by group slot
};
Expected expected_group(int slot, int n) {
  Expected e;
  const int color = color_of(slot, n);
  if (color < 0) return e;
  for (int g = 0; g < n; ++g) {
    if (color_of(g, n) != color) continue;
    int before = 0;
    for (int o = 0; o < n; ++o) {
      if (color_of(o, n) == color && std::pair(key_of(o), o) < std::pair(key_of(g), g)) ++before;
    }
    e.members.resize(std::max<size_t>(e.members.size(), static_cast<size_t>(before) + 1));
    e.members[static_cast<size_t>(before)] = g;
    if (g == slot) e.slot = before;
  }
  return e;
}

Status check_members(Communicator& group, int parent_slot, const std::vector<int>& members) {
  std::vector<int32_t> got(members.size(), -1);
  const int32_t mine = parent_slot;
  TM_RETURN_IF_ERROR(group.allgather(&mine, got.data(), 1, TM_INT32));
  for (size_t i = 0; i < members.size(); ++i) {
    if (got[i] != members[i])
      return error(TM_ERROR_INTERNAL, "group slot ", i, " is parent slot ", got[i], ", not ",
                   members[i]);
  }
  return Status::Ok();
}

int split_process(const testing::TestJob& job, int slot, int n) {
  auto parent = Communicator::create(job.config(slot, n, str_cat("split", n)));
  if (!parent.ok()) return complain(slot, parent.status().message());
  auto first = (*parent)->split(color_of(slot, n), key_of(slot));
  auto pairs = (*parent)->split(slot / 2, -slot);  // consecutive pairs, reversed
  if (!first.ok()) return complain(slot, "split: " + first.status().message());
  if (!pairs.ok()) return complain(slot, "second split: " + pairs.status().message());
  const Expected e = expected_group(slot, n);
  if ((*first == nullptr) != (e.slot < 0))
    return complain(slot, "group given for no color or none");
  Status st;
  if (*first != nullptr) {
    Communicator& g = **first;
    if (g.slot() != e.slot || g.nslots() != static_cast<int>(e.members.size()))
      return complain(slot, str_cat("group slot ", g.slot(), " of ", g.nslots(), ", expected ",
                                    e.slot, " of ", e.members.size()));
    st = check_members(g, slot, e.members);
  }
  // The pairs' order reversed: parent slot 2k+1 is group slot 0.
  const int pair_size = std::min(2, n - slot / 2 * 2);
  const int pair_slot = pair_size == 2 ? 1 - slot % 2 : 0;
  if (st.ok() && ((*pairs)->slot() != pair_slot || (*pairs)->nslots() != pair_size))
    st = error(TM_ERROR_INTERNAL, "pair group slot ", (*pairs)->slot(), " of ", (*pairs)->nslots());
  // Both groups and the parent, interleaved, each against the reference.
  for (int it = 0; it < 3 && st.ok(); ++it) {
    if (*first != nullptr) st = testing::run_iteration(**first, it, 1000 + 37 * it).status();
    if (st.ok()) st = testing::run_iteration(**pairs, it, 300).status();
    if (st.ok()) st = testing::run_iteration(**parent, it, 700).status();
  }
  if (!st.ok()) return complain(slot, st.message());
  // A group outlives its parent.
  parent->reset();
  if (*first != nullptr) st = testing::run_iteration(**first, 9, 4096).status();
  return st.ok() ? 0 : complain(slot, "after the parent's destruction: " + st.message());
}

class SplitTest : public ::testing::TestWithParam<int> {};

TEST_P(SplitTest, GroupsFollowColorAndKeyAndMatchTheReference) {
  const int n = GetParam();
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) { return split_process(job, slot, n); });
  for (int s = 0; s < n; ++s)
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
}

INSTANTIATE_TEST_SUITE_P(Slots, SplitTest, ::testing::Range(1, 9));

// ---- DP x PP: one switch through the parent ----

constexpr int kDp = 3, kPp = 2, kSlots = kDp * kPp, kVictim = 4;  // stage 1, DP index 1
constexpr int kIterations = 4, kSwitchAt = 2;
const char* const kCommNames[] = {"parent", "dp", "pp"};

int stage_of(int slot) { return slot / kDp; }
int dp_index_of(int slot) { return slot % kDp; }

struct Comms {
  std::unique_ptr<Communicator> parent, dp, pp;
  std::vector<Communicator*> all() const { return {parent.get(), dp.get(), pp.get()}; }
};

// The slot's groups: its stage's DP ring and its DP index's pipeline.
Status split_dp_pp(Comms& c, int slot) {
  TM_ASSIGN_OR_RETURN(c.dp, c.parent->split(stage_of(slot), dp_index_of(slot)));
  TM_ASSIGN_OR_RETURN(c.pp, c.parent->split(dp_index_of(slot), stage_of(slot)));
  return Status::Ok();
}

// One iteration on every communicator; each result, checked against the
// serial reference, is kept by (slot, iteration, communicator).
Status iterate(const Comms& c, rendezvous::Store& store, const std::string& run, int slot, int it) {
  const auto comms = c.all();
  for (size_t i = 0; i < comms.size(); ++i) {
    TM_ASSIGN_OR_RETURN(uint64_t hash, testing::run_iteration(*comms[i], it, 2000 + 100 * i));
    TM_RETURN_IF_ERROR(
        store.set(str_cat(run, "/hash/", slot, "/", it, "/", kCommNames[i]), std::to_string(hash)));
  }
  return Status::Ok();
}

// The parent's switch as the C API does it on a process of the current view.
Status switch_parent(Communicator& parent, uint64_t epoch) {
  TM_ASSIGN_OR_RETURN(View next, parent.fetch_view(epoch));
  TM_RETURN_IF_ERROR(parent.prepare_switch(next));
  TM_RETURN_IF_ERROR(parent.prepare_groups(next));
  TM_RETURN_IF_ERROR(parent.wait_prepared());
  TM_RETURN_IF_ERROR(parent.wait_groups_prepared());
  TM_RETURN_IF_ERROR(parent.switchover(epoch));
  return parent.switchover_groups(epoch);
}

// ... and as the runtime's worker does it on a standby taking `slot`, one
// of `victims` replaced in the same epoch: each joiner offers its
// endpoint, and every joiner publishes the same view from the offers. As
// in the runtime, the stayers prepare only once every joiner has joined
// (its answer to the promotion): `joined_key` says so.
Status join_parent(Communicator& parent, rendezvous::Store& store, uint64_t epoch, int slot,
                   const std::vector<int>& victims, const std::string& joined_key) {
  const std::string& name = parent.config().name;
  TM_RETURN_IF_ERROR(
      store.set(endpoint_key(name, epoch, slot), encode_endpoint(parent.endpoint())));
  TM_ASSIGN_OR_RETURN(View view, parent.fetch_view(epoch - 1));
  view.epoch = epoch;
  for (int v : victims) {
    TM_ASSIGN_OR_RETURN(std::string record, store.get(endpoint_key(name, epoch, v), kWait));
    TM_ASSIGN_OR_RETURN(view.slots[static_cast<size_t>(v)], parse_endpoint(record));
  }
  TM_RETURN_IF_ERROR(parent.publish_view(view));
  TM_RETURN_IF_ERROR(parent.join(view));
  TM_RETURN_IF_ERROR(parent.join_groups(epoch, slot, epoch - 1));
  TM_RETURN_IF_ERROR(store.set(joined_key, "1"));
  TM_RETURN_IF_ERROR(parent.wait_prepared());
  TM_RETURN_IF_ERROR(parent.wait_groups_prepared());
  TM_RETURN_IF_ERROR(parent.switchover(epoch));
  return parent.switchover_groups(epoch);
}

std::vector<LinkCounts> counts(const Comms& c) {
  std::vector<LinkCounts> out;
  for (Communicator* comm : c.all()) out.push_back(comm->link_counts());
  return out;
}

Status publish_counts(rendezvous::Store& store, const std::string& run, int who,
                      const std::vector<LinkCounts>& before, const std::vector<LinkCounts>& after) {
  for (size_t i = 0; i < before.size(); ++i) {
    TM_RETURN_IF_ERROR(store.set(
        str_cat(run, "/counts/", who, "/", kCommNames[i]),
        str_cat(after[i].opened - before[i].opened, " ", after[i].closed - before[i].closed)));
  }
  return Status::Ok();
}

bool is_victim(const std::vector<int>& victims, int slot) {
  return std::find(victims.begin(), victims.end(), slot) != victims.end();
}

int dp_pp_slot(const testing::TestJob& job, int slot, const std::string& run,
               const std::vector<int>& victims) {
  const bool with_switch = !victims.empty();
  auto store = testing::connect_store(job);
  if (!store) return complain(slot, "no store");
  Comms c;
  auto parent = Communicator::create(job.config(slot, kSlots, run));
  if (!parent.ok()) return complain(slot, parent.status().message());
  c.parent = std::move(*parent);
  Status st = split_dp_pp(c, slot);
  for (int it = 0; it < kSwitchAt && st.ok(); ++it) st = iterate(c, *store, run, slot, it);
  if (st.ok()) st = c.parent->barrier();  // every link up before anyone leaves
  if (!st.ok()) return complain(slot, "before the switch: " + st.message());
  if (with_switch) {
    const auto before = counts(c);
    for (int v : victims) {
      if (st.ok()) st = store->get(str_cat(run, "/joined/", v), kWait).status();
    }
    if (st.ok()) st = switch_parent(*c.parent, 1);
    if (!st.ok()) return complain(slot, "switch: " + st.message());
    if (!publish_counts(*store, run, slot, before, counts(c)).ok()) return 4;
    if (is_victim(victims, slot)) {
      // The leaver is out of the parent: a split on it is refused.
      auto late = c.parent->split(0, 0);
      if (late.ok() || late.status().code() != TM_ERROR_INVALID_ARGUMENT ||
          late.status().message().find("left") == std::string::npos)
        return complain(slot, "split after leaving: " + late.status().message());
      return 0;
    }
  }
  for (int it = kSwitchAt; it < kIterations && st.ok(); ++it)
    st = iterate(c, *store, run, slot, it);
  return st.ok() ? 0 : complain(slot, "after the switch: " + st.message());
}

// The standby that takes victims[which]; it reports as process kSlots + which.
int dp_pp_standby(const testing::TestJob& job, const std::string& run,
                  const std::vector<int>& victims, size_t which) {
  const int victim = victims[which];
  auto store = testing::connect_store(job);
  if (!store) return complain(-1, "no store");
  Comms c;
  auto parent = Communicator::create_standby(job.config(0, kSlots, run));
  if (!parent.ok()) return complain(-1, parent.status().message());
  c.parent = std::move(*parent);
  Status st = split_dp_pp(c, victim);  // standby groups, sized from the job's record
  if (!st.ok()) return complain(-1, "standby split: " + st.message());
  const auto before = counts(c);
  st = join_parent(*c.parent, *store, 1, victim, victims, str_cat(run, "/joined/", victim));
  if (!st.ok()) return complain(victim, "joining: " + st.message());
  if (c.dp->slot() != dp_index_of(victim) || c.pp->slot() != stage_of(victim))
    return complain(victim, str_cat("joined groups as ", c.dp->slot(), ", ", c.pp->slot()));
  const int who = kSlots + static_cast<int>(which);
  if (!publish_counts(*store, run, who, before, counts(c)).ok()) return 4;
  for (int it = kSwitchAt; it < kIterations && st.ok(); ++it)
    st = iterate(c, *store, run, victim, it);
  return st.ok() ? 0 : complain(victim, "after joining: " + st.message());
}

// DP x PP with the parent slots in `victims` replaced by standbys in one
// switch (none: no switch).
void run_dp_pp(const std::string& run, const std::vector<int>& victims,
               const testing::TestJob& job) {
  const int processes = kSlots + static_cast<int>(victims.size());
  auto exits = job.run(processes, [&](int who) {
    return who >= kSlots ? dp_pp_standby(job, run, victims, static_cast<size_t>(who - kSlots))
                         : dp_pp_slot(job, who, run, victims);
  });
  for (int who = 0; who < processes; ++who)
    EXPECT_TRUE(exits[static_cast<size_t>(who)].ok())
        << run << " process " << who << ": " << exits[static_cast<size_t>(who)].describe();
}

// A group's view of `epoch` as the switch published it.
Result<View> view_of(rendezvous::Store& store, const std::string& name, int nslots,
                     uint64_t epoch) {
  if (epoch == 0) return fetch_first_view(store, name, nslots, kWait);
  TM_ASSIGN_OR_RETURN(std::string record, store.get(view_key(name, epoch), kWait));
  return parse_view(record);
}

// Expected (opened, closed) of one process in one communicator: its entry
// of the views' delta.
LinkCounts expected_counts(const std::vector<ProcessDelta>& changes, uint64_t instance) {
  for (const ProcessDelta& d : changes) {
    if (d.instance_id == instance) return {d.open.size(), d.close.size()};
  }
  return {};
}

// Per communicator (parent, the two DP groups, the three PP groups): every
// process's counts equal the delta, and the totals, summed here, are
// returned by name for the figures.
std::map<std::string, LinkCounts> compare_counts(rendezvous::Store& store, const std::string& run) {
  struct Comm {
    std::string label, name;
    int index;                 // into kCommNames
    std::vector<int> members;  // parent slots by group slot
  };
  std::vector<Comm> comms = {{"parent", run, 0, {0, 1, 2, 3, 4, 5}}};
  for (int stage = 0; stage < kPp; ++stage)
    comms.push_back({str_cat("dp", stage),
                     str_cat(run, "/split0.", stage),
                     1,
                     {stage * kDp, stage * kDp + 1, stage * kDp + 2}});
  for (int d = 0; d < kDp; ++d)
    comms.push_back({str_cat("pp", d), str_cat(run, "/split1.", d), 2, {d, kDp + d}});
  std::map<std::string, LinkCounts> totals;
  for (const Comm& comm : comms) {
    const int n = static_cast<int>(comm.members.size());
    auto from = view_of(store, comm.name, n, 0);
    auto to = view_of(store, comm.name, n, 1);
    EXPECT_TRUE(from.ok() && to.ok()) << comm.label << ": views not found";
    if (!from.ok() || !to.ok()) continue;
    EXPECT_EQ(to->epoch, 1u) << comm.label << " switched in the parent's epoch";
    auto changes = delta(*from, *to, AlgorithmPolicy{});  // the processes' default
    EXPECT_TRUE(changes.ok()) << changes.status().message();
    if (!changes.ok()) continue;
    LinkCounts& total = totals[comm.label];
    for (int g = 0; g <= n; ++g) {  // g == n: the joiner, where it is a member
      const bool joiner = g == n;
      const int parent_slot = joiner ? kVictim : comm.members[static_cast<size_t>(g)];
      if (joiner &&
          std::find(comm.members.begin(), comm.members.end(), kVictim) == comm.members.end())
        continue;
      const uint64_t instance =
          joiner ? to->slots[static_cast<size_t>(
                                 std::find(comm.members.begin(), comm.members.end(), kVictim) -
                                 comm.members.begin())]
                       .instance_id
                 : from->slots[static_cast<size_t>(g)].instance_id;
      const int who = joiner ? kSlots : parent_slot;
      auto got = store.get(str_cat(run, "/counts/", who, "/", kCommNames[comm.index]), kWait);
      EXPECT_TRUE(got.ok()) << comm.label << " process " << who;
      if (!got.ok()) continue;
      unsigned long long opened = 0, closed = 0;
      EXPECT_EQ(std::sscanf(got->c_str(), "%llu %llu", &opened, &closed), 2);
      const LinkCounts want = expected_counts(*changes, instance);
      EXPECT_EQ(opened, want.opened) << comm.label << ": links opened by process " << who;
      EXPECT_EQ(closed, want.closed) << comm.label << ": links closed by process " << who;
      total.opened += opened;
      total.closed += closed;
    }
  }
  return totals;
}

// Bitwise: every result of run `b` equals run `a`'s.
void expect_same_results(rendezvous::Store& store, const std::string& a, const std::string& b) {
  for (int slot = 0; slot < kSlots; ++slot) {
    for (int it = 0; it < kIterations; ++it) {
      for (const char* comm : kCommNames) {
        auto want = store.get(str_cat(a, "/hash/", slot, "/", it, "/", comm), kWait);
        auto got = store.get(str_cat(b, "/hash/", slot, "/", it, "/", comm), kWait);
        ASSERT_TRUE(want.ok() && got.ok()) << b << " " << slot << " " << it << " " << comm;
        EXPECT_EQ(*want, *got) << b << ": slot " << slot << " iteration " << it << " " << comm;
      }
    }
  }
}

TEST(GroupSwitch, OneParentSwitchReplacesTheSlotInEveryGroupChangingOnlyItsLinks) {
  testing::TestJob job;
  run_dp_pp("plain", {}, job);
  run_dp_pp("switch", {kVictim}, job);
  auto store = testing::connect_store(job);
  ASSERT_TRUE(store != nullptr);
  expect_same_results(*store, "plain", "switch");
  auto totals = compare_counts(*store, "switch");
  // Slot 4's two ring links and its recursive doubling link (to slot 0: 4
  // is beyond p = 4) in the parent, its two links in its DP group of 3, its
  // one link in its pipeline of 2, each counted at both ends; nothing
  // elsewhere.
  const std::map<std::string, std::pair<uint64_t, uint64_t>> want = {
      {"parent", {6, 6}}, {"dp0", {0, 0}}, {"dp1", {4, 4}},
      {"pp0", {0, 0}},    {"pp1", {2, 2}}, {"pp2", {0, 0}}};
  for (const auto& [label, oc] : want) {
    EXPECT_EQ(totals[label].opened, oc.first) << label;
    EXPECT_EQ(totals[label].closed, oc.second) << label;
    std::printf("links changed by the switch of slot %d, %s: opened %llu, closed %llu\n", kVictim,
                label.c_str(), static_cast<unsigned long long>(totals[label].opened),
                static_cast<unsigned long long>(totals[label].closed));
  }
}

// Three slots replaced in one switch: slots 1 and 4 are the whole pipeline
// of DP index 1 (its joiners alone assemble its view), 4 and 5 two of the
// three slots of stage 1's DP ring, 1 one of stage 0's.
TEST(GroupSwitch, SeveralSlotsOfOneGroupReplacedInOneSwitch) {
  testing::TestJob job;
  run_dp_pp("plain", {}, job);
  run_dp_pp("three", {1, 4, 5}, job);
  auto store = testing::connect_store(job);
  ASSERT_TRUE(store != nullptr);
  expect_same_results(*store, "plain", "three");
  for (const char* group :
       {"three/split0.0", "three/split0.1", "three/split1.0", "three/split1.1", "three/split1.2"}) {
    auto view = store->get(view_key(group, 1), kWait);
    EXPECT_TRUE(view.ok()) << group << " has no view of the parent's epoch 1";
  }
}

// ---- bad arguments ----

int bad_color_process(const testing::TestJob& job, int slot) {
  auto parent = Communicator::create(job.config(slot, 3, "badcolor"));
  if (!parent.ok()) return complain(slot, parent.status().message());
  auto group = (*parent)->split(slot == 1 ? -5 : 0, slot);
  if (group.ok() || group.status().code() != TM_ERROR_INVALID_ARGUMENT ||
      group.status().message().find("slot 1 gave color -5") == std::string::npos)
    return complain(slot, "bad color: " + group.status().message());
  // The parent is unharmed, and a good split works after it.
  auto again = (*parent)->split(0, slot);
  if (!again.ok() || (*again)->nslots() != 3) return complain(slot, "split after a bad one");
  Status st = testing::run_iteration(**again, 0, 64).status();
  if (!st.ok()) return complain(slot, st.message());
  // Every slot is done with the group before anyone aborts (the abort
  // reaches the parent's groups and their peers); the barrier itself may
  // see a peer's abort, which is not what is tested here.
  (void)(*parent)->barrier();
  // Aborted: the split's exchange fails with the abort.
  (void)(*parent)->abort();
  auto aborted = (*parent)->split(0, 0);
  if (aborted.ok() || aborted.status().code() != TM_ERROR_ABORTED)
    return complain(slot, "split on an aborted parent: " + aborted.status().message());
  return 0;
}

TEST(GroupSplit, BadColorFailsOnEverySlotNamingIt) {
  testing::TestJob job;
  auto exits = job.run(3, [&](int slot) { return bad_color_process(job, slot); });
  for (int s = 0; s < 3; ++s)
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
}

TEST(GroupSplit, CApiRejectsNullHandles) {
  tm_comm_t out = reinterpret_cast<tm_comm_t>(&out);
  EXPECT_EQ(tm_comm_split(nullptr, 0, 0, &out), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr) << "*newcomm is NULL on an error";
  EXPECT_NE(std::string(tm_get_last_error()).find("comm is NULL"), std::string::npos)
      << tm_get_last_error();
  EXPECT_EQ(tm_comm_split_config(nullptr, 0, 0, nullptr, nullptr), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tm_get_last_error()).find("newcomm is NULL"), std::string::npos);
  EXPECT_EQ(tm_comm_go_split(nullptr, nullptr, 0, 0), TM_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace trainmover
