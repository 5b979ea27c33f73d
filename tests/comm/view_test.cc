// Membership views and deltas: replacing one process changes only the links
// of its slot, and only the processes at those links' ends act.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "comm/view.h"
#include "comm/view_record.h"
#include "rendezvous/tcp_store.h"
#include "rendezvous/tcp_store_server.h"

namespace trainmover {
namespace {

View ring(int n, uint64_t epoch = 1, uint64_t first_instance = 100) {
  View v;
  v.epoch = epoch;
  for (int s = 0; s < n; ++s)
    v.slots.push_back({"127.0.0.1:" + std::to_string(5000 + s), first_instance + s});
  return v;
}

View replaced(View v, int slot, uint64_t joiner) {
  v.epoch += 1;
  v.slots[static_cast<size_t>(slot)] = {"127.0.0.1:6000", joiner};
  return v;
}

const AlgorithmPolicy kRingOnly = AlgorithmPolicy::ring_only();

const ProcessDelta* find(const std::vector<ProcessDelta>& d, uint64_t id) {
  for (const auto& p : d) {
    if (p.instance_id == id) return &p;
  }
  return nullptr;
}

TEST(View, RingPairs) {
  EXPECT_TRUE(linked_pairs(ring(1), kRingOnly).empty());
  EXPECT_EQ(linked_pairs(ring(2), kRingOnly), (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(linked_pairs(ring(4), kRingOnly),
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 3}, {1, 2}, {2, 3}}));
}

TEST(View, ReplacingASlotTouchesOnlyItsNeighbours) {
  for (int n : {3, 4, 8, 64}) {
    for (int slot : {0, n / 2, n - 1}) {
      View old_view = ring(n);
      View new_view = replaced(old_view, slot, 999);
      auto d = delta(old_view, new_view, kRingOnly);
      ASSERT_TRUE(d.ok()) << d.status().message();
      ASSERT_EQ(d->size(), 4u) << "n=" << n << " slot=" << slot;  // leaver, joiner, two neighbours
      int prev = (slot + n - 1) % n, next = (slot + 1) % n;
      std::vector<int> both = {std::min(prev, next), std::max(prev, next)};
      const ProcessDelta* leaver = find(*d, 100 + static_cast<uint64_t>(slot));
      const ProcessDelta* joiner = find(*d, 999);
      ASSERT_TRUE(leaver && joiner);
      EXPECT_EQ(leaver->close, both);
      EXPECT_TRUE(leaver->open.empty());
      EXPECT_EQ(joiner->open, both);
      EXPECT_TRUE(joiner->close.empty());
      for (int neighbour : {prev, next}) {
        const ProcessDelta* p = find(*d, 100 + static_cast<uint64_t>(neighbour));
        ASSERT_TRUE(p);
        EXPECT_EQ(p->open, std::vector<int>{slot});
        EXPECT_EQ(p->close, std::vector<int>{slot});
      }
    }
  }
}

// Under the default policy a slot is also linked to its recursive doubling
// partners (comm/doubling_plan.h), written out here from the doc: s ^ 2^k
// below the largest power of two p, and s +- p for the slots beyond it.
std::set<int> doubling_partners(int n, int s) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  std::set<int> out;
  if (s >= p) return {s - p};
  for (int bit = 1; bit < p; bit *= 2) out.insert(s ^ bit);
  if (s + p < n) out.insert(s + p);
  return out;
}

TEST(View, WithRecursiveDoublingReplacingASlotTouchesOnlyItsLinks) {
  const AlgorithmPolicy policy;  // the default: doubling for small allreduces
  ASSERT_TRUE(policy.may_use_doubling());
  for (int n = 2; n <= 40; ++n) {
    for (int slot = 0; slot < n; ++slot) {
      std::set<int> expected = doubling_partners(n, slot);
      expected.insert((slot + 1) % n);
      expected.insert((slot + n - 1) % n);
      int log2n = 0;
      while ((2 << log2n) <= n) ++log2n;
      EXPECT_LE(expected.size(), static_cast<size_t>(log2n + 3)) << "n=" << n;
      View old_view = ring(n);
      auto d = delta(old_view, replaced(old_view, slot, 999), policy);
      ASSERT_TRUE(d.ok()) << d.status().message();
      ASSERT_EQ(d->size(), expected.size() + 2) << "n=" << n << " slot=" << slot;
      const ProcessDelta* joiner = find(*d, 999);
      ASSERT_TRUE(joiner);
      EXPECT_EQ(std::set<int>(joiner->open.begin(), joiner->open.end()), expected)
          << "n=" << n << " slot=" << slot;
      for (int peer : expected) {
        const ProcessDelta* p = find(*d, 100 + static_cast<uint64_t>(peer));
        ASSERT_TRUE(p) << "n=" << n << " slot=" << slot << " peer=" << peer;
        EXPECT_EQ(p->open, std::vector<int>{slot});
      }
    }
  }
}

TEST(View, TwoSlots) {
  View old_view = ring(2);
  auto d = delta(old_view, replaced(old_view, 1, 999), kRingOnly);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 3u);
  EXPECT_EQ(find(*d, 100)->open, std::vector<int>{1});
  EXPECT_EQ(find(*d, 999)->open, std::vector<int>{0});
}

TEST(View, TwoAdjacentJoinersLinkToEachOther) {
  View old_view = ring(5);
  View new_view = replaced(replaced(old_view, 2, 901), 3, 902);
  new_view.epoch = old_view.epoch + 1;
  auto d = delta(old_view, new_view, kRingOnly);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(find(*d, 901)->open, (std::vector<int>{1, 3}));
  EXPECT_EQ(find(*d, 902)->open, (std::vector<int>{2, 4}));
  EXPECT_EQ(find(*d, 100), nullptr);  // slot 0 has nothing to do
}

TEST(View, PipelinePairsChangeToo) {
  View old_view = ring(6);
  old_view.extra_pairs = {{0, 3}, {3, 5}};
  View new_view = replaced(old_view, 3, 999);
  auto d = delta(old_view, new_view, kRingOnly);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(find(*d, 999)->open, (std::vector<int>{0, 2, 4, 5}));
  EXPECT_EQ(find(*d, 100)->open, std::vector<int>{3});  // slot 0 via its pipeline pair
}

TEST(View, RejectsBadViews) {
  View old_view = ring(4);
  View same_epoch = replaced(old_view, 1, 999);
  same_epoch.epoch = old_view.epoch;
  EXPECT_EQ(delta(old_view, same_epoch, kRingOnly).status().code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(delta(old_view, ring(5, 2), kRingOnly).status().code(), TM_ERROR_INVALID_ARGUMENT);
  View twice = replaced(old_view, 1, 102);  // process 102 would serve slots 1 and 2
  EXPECT_EQ(delta(old_view, twice, kRingOnly).status().code(), TM_ERROR_INVALID_ARGUMENT);
  View bad_pair = ring(4);
  bad_pair.extra_pairs = {{1, 1}};
  EXPECT_EQ(bad_pair.validate().code(), TM_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace trainmover

// ---- view records: how views travel through the store ------------------------

namespace trainmover {
namespace {

TEST(ViewRecord, RoundTrips) {
  View v = ring(5, 7);
  v.extra_pairs = {{0, 3}, {1, 4}};
  auto parsed = parse_view(encode_view(v));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->epoch, 7u);
  ASSERT_EQ(parsed->nslots(), 5);
  for (int s = 0; s < 5; ++s) {
    EXPECT_EQ(parsed->slots[static_cast<size_t>(s)].address,
              v.slots[static_cast<size_t>(s)].address);
    EXPECT_EQ(parsed->slots[static_cast<size_t>(s)].instance_id,
              v.slots[static_cast<size_t>(s)].instance_id);
  }
  EXPECT_EQ(parsed->extra_pairs, v.extra_pairs);
}

TEST(ViewRecord, MalformedRecordsAreRejectedSayingWhy) {
  std::string good = encode_view(ring(3));
  struct Case {
    std::string record;
    const char* expected;
  } cases[] = {
      {"", "empty"},
      {"epoch x slots 3 pairs 0\n", "bad header"},
      {"epoch 1 slots 0 pairs 0\n", "bad header"},
      {good.substr(0, good.rfind("127.0.0.1")), "missing slot 2"},
      {good + "junk\n", "trailing data"},
      {"epoch 1 slots 1 pairs 1\n127.0.0.1:1 0000000000000001\n0\n", "bad pair 0"},
      {"epoch 1 slots 2 pairs 0\n127.0.0.1:1 0000000000000001\n127.0.0.1:2 0000000000000001\n",
       "serves two slots"},
      {"epoch 1 slots 1 pairs 0\n127.0.0.1:1 xyz\n", "malformed endpoint"},
  };
  for (const Case& c : cases) {
    auto parsed = parse_view(c.record);
    ASSERT_FALSE(parsed.ok()) << c.expected;
    EXPECT_NE(parsed.status().message().find(c.expected), std::string::npos)
        << parsed.status().message();
  }
}

// One epoch, one view, through a real store server: a second, different
// view of a published epoch is refused, the same view again is not, and of
// writers racing to publish different views of one epoch exactly one wins.
class ViewPublishTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kJob = 77;
  void SetUp() override {
    auto server = rendezvous::TcpStoreServer::start("127.0.0.1:0", secret_, kJob);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
  }
  std::unique_ptr<rendezvous::TcpStore> client() {
    return rendezvous::TcpStore::connect(server_->address(), secret_, kJob, seconds(5)).value();
  }
  const JobSecret secret_ = JobSecret::from_hex("0123456789abcdef0123456789abcdef").value();
  std::unique_ptr<rendezvous::TcpStoreServer> server_;
};

TEST_F(ViewPublishTest, AnEpochKeepsItsFirstView) {
  auto store = client();
  View first = replaced(ring(4), 2, 900);
  View other = replaced(ring(4), 2, 901);
  ASSERT_TRUE(publish_view(*store, "c", first).ok());
  EXPECT_TRUE(publish_view(*store, "c", first).ok());  // a retry
  Status second = publish_view(*store, "c", other);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.code(), TM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(second.message().find("view epoch 2 of communicator 'c' was already published"),
            std::string::npos)
      << second.message();
  auto stored = parse_view(store->get(view_key("c", 2), seconds(1)).value());
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->slots[2].instance_id, 900u);
  EXPECT_TRUE(publish_view(*store, "other-comm", other).ok());  // names do not collide
}

TEST_F(ViewPublishTest, RacingPublishersOfOneEpochHaveOneWinner) {
  constexpr int kWriters = 6;
  std::vector<std::unique_ptr<rendezvous::TcpStore>> stores;
  for (int i = 0; i < kWriters; ++i) stores.push_back(client());
  for (uint64_t round = 0; round < 10; ++round) {
    std::vector<Status> results(kWriters);
    std::vector<std::thread> writers;
    for (int i = 0; i < kWriters; ++i) {
      writers.emplace_back([&, i] {
        View v = replaced(ring(8, 1 + round), 3, 1000 + static_cast<uint64_t>(i));
        results[static_cast<size_t>(i)] = publish_view(*stores[static_cast<size_t>(i)], "race", v);
      });
    }
    for (auto& w : writers) w.join();
    int won = 0;
    for (const Status& st : results) won += st.ok() ? 1 : 0;
    EXPECT_EQ(won, 1) << "round " << round;
  }
}

}  // namespace
}  // namespace trainmover
