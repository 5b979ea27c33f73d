// The links a real switch opens and closes, as each process counts them
// (Communicator::link_counts), equal what the view delta says: for every
// process, as many opened and closed as its entry of delta(old, new) lists
// (none when it has no entry), for a ring and for a ring with pipeline
// pairs, with the ring's links only and with recursive doubling's too. Five slots and a standby
// replace slot 1 in a planned switch; the pipeline pairs' links are opened by point-to-point
// traffic before it.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/switching.h"

namespace trainmover {
namespace {

using testing::complain;
using Pairs = std::vector<std::pair<int, int>>;

constexpr int kSlots = 5;
constexpr int kVictim = 1;

std::string counts_key(int who) { return str_cat("counts/", who); }

CommConfig config_of(const testing::TestJob& job, int slot, const std::string& run,
                     const AlgorithmPolicy& policy) {
  CommConfig config = job.config(slot, kSlots, run);
  config.algorithms = policy;
  return config;
}

// One message each way of every pair that has `slot` (the lower end sends
// first): opens the pair's link, or proves it works.
Status exchange_pairs(Communicator& comm, const Pairs& pairs) {
  for (auto [a, b] : pairs) {
    if (comm.slot() != a && comm.slot() != b) continue;
    const int peer = comm.slot() == a ? b : a;
    int32_t out = comm.slot();
    int32_t in = -1;
    if (comm.slot() == a) {
      TM_RETURN_IF_ERROR(comm.send(&out, 1, TM_INT32, peer));
      TM_RETURN_IF_ERROR(comm.recv(&in, 1, TM_INT32, peer));
    } else {
      TM_RETURN_IF_ERROR(comm.recv(&in, 1, TM_INT32, peer));
      TM_RETURN_IF_ERROR(comm.send(&out, 1, TM_INT32, peer));
    }
    if (in != peer) return error(TM_ERROR_INTERNAL, "slot ", peer, " sent ", in);
  }
  return Status::Ok();
}

// The views of the switch: the first (with the pipeline pairs) and epoch 1,
// where the standby serves kVictim.
struct Views {
  View first;
  View next;
};

Result<Views> switch_views(rendezvous::Store& store, const std::string& run, const Pairs& pairs) {
  TM_ASSIGN_OR_RETURN(Endpoint joiner, testing::fetch_endpoint(store, "standby"));
  TM_ASSIGN_OR_RETURN(View first, testing::initial_view(store, run, kSlots));
  first.extra_pairs = pairs;
  return Views{first, testing::replace_slot(first, 1, kVictim, joiner)};
}

Status publish_counts(rendezvous::Store& store, int who, LinkCounts before, LinkCounts after) {
  return store.set(counts_key(who),
                   str_cat(after.opened - before.opened, " ", after.closed - before.closed));
}

// After the switch: the new ring and the pairs carry data.
Status use_new_view(Communicator& comm, const Pairs& pairs) {
  int32_t value = 1;
  TM_RETURN_IF_ERROR(comm.allreduce(&value, &value, 1, TM_INT32, TM_SUM));
  if (value != kSlots) return error(TM_ERROR_INTERNAL, "allreduce gave ", value);
  return exchange_pairs(comm, pairs);
}

int slot_process(const testing::TestJob& job, int slot, const std::string& run, const Pairs& pairs,
                 const AlgorithmPolicy& policy) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create(config_of(job, slot, run, policy));
  if (!store) return complain(slot, "no store");
  if (!created.ok()) return complain(slot, created.status().message());
  Communicator& comm = *created.value();
  Status st = exchange_pairs(comm, pairs);
  // Every slot's links up before any switches: a leaver gone early would
  // fail a neighbour still creating its communicator.
  if (st.ok()) st = comm.barrier();
  if (!st.ok()) return complain(slot, "before the switch: " + st.message());
  auto views = switch_views(*store, run, pairs);
  if (!views.ok()) return complain(slot, views.status().message());
  const LinkCounts before = comm.link_counts();
  if (slot == kVictim) {
    st = comm.prepare_switch(views->next);
    if (st.ok()) st = comm.switchover(1);
  } else {
    st = testing::switch_to(comm, views->next);
  }
  if (!st.ok()) return complain(slot, "switch: " + st.message());
  if (!publish_counts(*store, slot, before, comm.link_counts()).ok()) return 4;
  if (slot == kVictim) return 0;
  st = use_new_view(comm, pairs);
  return st.ok() ? 0 : complain(slot, "after the switch: " + st.message());
}

int standby_process(const testing::TestJob& job, const std::string& run, const Pairs& pairs,
                    const AlgorithmPolicy& policy) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create_standby(config_of(job, 0, run, policy));
  if (!store) return complain(-1, "no store");
  if (!created.ok()) return complain(-1, created.status().message());
  Communicator& comm = *created.value();
  if (!testing::publish_endpoint(*store, "standby", comm.endpoint()).ok()) return 4;
  auto views = switch_views(*store, run, pairs);
  if (!views.ok()) return complain(-1, views.status().message());
  const LinkCounts before = comm.link_counts();
  Status st = testing::join_view(comm, views->next);
  if (!st.ok()) return complain(kVictim, "joining: " + st.message());
  if (!publish_counts(*store, kSlots, before, comm.link_counts()).ok()) return 4;
  st = use_new_view(comm, pairs);
  return st.ok() ? 0 : complain(kVictim, "after joining: " + st.message());
}

// Runs the switch, then compares every process's counts with the delta;
// returns the totals (opened, closed) over the processes.
LinkCounts run_and_compare(const Pairs& pairs, const std::string& run,
                           const AlgorithmPolicy& policy) {
  testing::TestJob job;
  auto exits = job.run(kSlots + 1, [&](int who) {
    return who == kSlots ? standby_process(job, run, pairs, policy)
                         : slot_process(job, who, run, pairs, policy);
  });
  for (int who = 0; who <= kSlots; ++who)
    EXPECT_TRUE(exits[static_cast<size_t>(who)].ok())
        << "process " << who << ": " << exits[static_cast<size_t>(who)].describe();
  auto store = testing::connect_store(job);
  EXPECT_TRUE(store != nullptr);
  if (!store) return {};
  auto views = switch_views(*store, run, pairs);
  EXPECT_TRUE(views.ok()) << views.status().message();
  if (!views.ok()) return {};
  auto changes = delta(views->first, views->next, policy);
  EXPECT_TRUE(changes.ok()) << changes.status().message();
  if (!changes.ok()) return {};
  LinkCounts total;
  for (int who = 0; who <= kSlots; ++who) {
    const uint64_t instance = who == kSlots
                                  ? views->next.slots[kVictim].instance_id
                                  : views->first.slots[static_cast<size_t>(who)].instance_id;
    size_t open = 0, close = 0;
    for (const ProcessDelta& d : changes.value()) {
      if (d.instance_id == instance) {
        open = d.open.size();
        close = d.close.size();
      }
    }
    auto counts = store->get(counts_key(who), std::chrono::seconds(5));
    EXPECT_TRUE(counts.ok()) << "process " << who << ": " << counts.status().message();
    if (!counts.ok()) continue;
    unsigned long long opened = 0, closed = 0;
    EXPECT_EQ(std::sscanf(counts.value().c_str(), "%llu %llu", &opened, &closed), 2)
        << counts.value();
    EXPECT_EQ(opened, open) << "links opened by process " << who;
    EXPECT_EQ(closed, close) << "links closed by process " << who;
    total.opened += opened;
    total.closed += closed;
  }
  return total;
}

TEST(SwitchLinkCounts, RingEqualsTheDelta) {
  // Slot 1's two ring links, counted at both ends.
  LinkCounts total = run_and_compare({}, "ring", AlgorithmPolicy::ring_only());
  EXPECT_EQ(total.opened, 4u);
  EXPECT_EQ(total.closed, 4u);
}

TEST(SwitchLinkCounts, RingWithPipelinePairsEqualsTheDelta) {
  // Slot 1's two ring links and its pair (1, 3); the pair (0, 2) stays.
  LinkCounts total = run_and_compare({{0, 2}, {1, 3}}, "pipeline", AlgorithmPolicy::ring_only());
  EXPECT_EQ(total.opened, 6u);
  EXPECT_EQ(total.closed, 6u);
}

TEST(SwitchLinkCounts, RingAndRecursiveDoublingEqualsTheDelta) {
  // Slot 1 of 5 (p = 4): its ring links (0, 1) and (1, 2) and its doubling
  // partners 0 and 3 (1 ^ 1, 1 ^ 2): three links, counted at both ends;
  // the pipeline pair (1, 3) is one of them.
  for (const Pairs& pairs : {Pairs{}, Pairs{{0, 2}, {1, 3}}}) {
    LinkCounts total = run_and_compare(pairs, str_cat("doubling", pairs.size()), AlgorithmPolicy{});
    EXPECT_EQ(total.opened, 6u) << pairs.size() << " pipeline pairs";
    EXPECT_EQ(total.closed, 6u) << pairs.size() << " pipeline pairs";
  }
}

}  // namespace
}  // namespace trainmover
