// Tests of recursive doubling (comm/doubling_plan.h) and recursive halving
// (comm/halving_plan.h) with an in-memory
// simulator: the plans of all slots run together, each pair of slots a FIFO
// channel per direction, receives applied only once their plan allows it; the
// results of allreduce (both algorithms), broadcast and allgather are
// compared bit for bit with serial references written from the documented
// orders (recursive halving documents recursive doubling's order). And the choice of
// algorithm (comm/algorithm.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "comm/algorithm.h"
#include "comm/doubling_plan.h"
#include "comm/halving_plan.h"
#include "support/plan_values.h"

namespace trainmover {
namespace {

using testing::kPoison;

float value_of(int slot, size_t i) { return testing::plan_value(slot, i); }

// The documented order: v(s) = x[s] + x[s+p] for s < n - p, then the
// balanced tree over slots 0..p-1, each pair's lower half first.
float tree(const std::vector<float>& v, size_t a, size_t width) {
  if (width == 1) return v[a];
  return tree(v, a, width / 2) + tree(v, a + width / 2, width / 2);
}

float expected(int n, size_t i) {
  size_t p = 1;
  while (p * 2 <= static_cast<size_t>(n)) p *= 2;
  std::vector<float> v;
  for (size_t s = 0; s < p; ++s) {
    float x = value_of(static_cast<int>(s), i);
    v.push_back(s + p < static_cast<size_t>(n) ? x + value_of(static_cast<int>(s + p), i) : x);
  }
  return tree(v, 0, p);
}

enum class Kind {
  kAllreduce,
  kBroadcast,
  kAllgather,
  kAllreduceHalving,
  kReduceScatterHalving,  // count: recvcount; output: the whole reduced buffer
};

struct Scenario {
  Kind kind = Kind::kAllreduce;
  int n = 1;
  size_t count = 0;  // allgather: sendcount
  size_t segment = 1;
  bool in_place = false;
  int root = 0;

  bool whole_output() const {
    return kind == Kind::kAllgather || kind == Kind::kReduceScatterHalving;
  }
  size_t output_len() const { return whole_output() ? count * static_cast<size_t>(n) : count; }
  size_t input_len() const {
    return kind == Kind::kReduceScatterHalving ? count * static_cast<size_t>(n) : count;
  }
  // The output elements checked: a reduce_scatter's own block only.
  std::pair<size_t, size_t> checked(int slot) const {
    if (kind != Kind::kReduceScatterHalving) return {0, output_len()};
    return {count * static_cast<size_t>(slot), count * static_cast<size_t>(slot + 1)};
  }
  // In place, allgather's input is the slot's block of output.
  size_t input_at(int slot) const {
    return kind == Kind::kAllgather && in_place ? count * static_cast<size_t>(slot) : 0;
  }
  float want(int slot, size_t i) const {
    (void)slot;
    switch (kind) {
      case Kind::kAllreduce:
      case Kind::kAllreduceHalving:
      case Kind::kReduceScatterHalving:
        return expected(n, i);
      case Kind::kBroadcast:
        return value_of(root, i);
      case Kind::kAllgather:
        return value_of(static_cast<int>(i / count), i % count);
    }
    return 0;
  }
  std::string describe() const {
    const char* names[] = {"allreduce", "broadcast", "allgather", "allreduce-halving",
                           "reduce_scatter-halving"};
    return std::string(names[static_cast<int>(kind)]) + " n=" + std::to_string(n) +
           " count=" + std::to_string(count) + " segment=" + std::to_string(segment) +
           " root=" + std::to_string(root) + (in_place ? " in-place" : "");
  }
};

struct Slot {
  CollectivePlan plan;
  std::vector<float> input, output;
  std::map<size_t, std::vector<float>> staged;  // by receive index
  size_t sends = 0, recvs = 0;
};

class Simulator {
 public:
  explicit Simulator(const Scenario& sc) : sc_(sc), n_(sc.n), slots_(static_cast<size_t>(sc.n)) {
    for (int s = 0; s < n_; ++s) {
      Slot& slot = at(s);
      PlanGeometry g{n_, s, sc.segment};
      switch (sc.kind) {
        case Kind::kAllreduce:
          plan_allreduce_doubling(slot.plan, g, sc.count, false);
          break;
        case Kind::kBroadcast:
          plan_broadcast_doubling(slot.plan, g, sc.count, sc.root, sc.in_place);
          break;
        case Kind::kAllgather:
          plan_allgather_doubling(slot.plan, g, sc.count, sc.in_place);
          break;
        case Kind::kAllreduceHalving:
          plan_allreduce_halving(slot.plan, g, sc.count, false);
          break;
        case Kind::kReduceScatterHalving:
          plan_reduce_scatter_halving(slot.plan, g, sc.count, false);
          break;
      }
      const bool has_input = sc.kind != Kind::kBroadcast || s == sc.root;
      slot.input.assign(sc.input_len(), kPoison);
      if (has_input) {
        for (size_t i = 0; i < sc.input_len(); ++i) slot.input[i] = value_of(s, i);
      }
      slot.output.assign(sc.output_len(), kPoison);
      if (sc.in_place && has_input) {
        std::copy(slot.input.begin(), slot.input.end(),
                  slot.output.begin() + static_cast<ptrdiff_t>(sc.input_at(s)));
      }
    }
  }

  void run() {
    for (int s = 0; s < n_; ++s) copy(at(s), s);
    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (int s = 0; s < n_; ++s) {
        while (send(s)) progressed = true;
        if (::testing::Test::HasFatalFailure()) return;
      }
      for (int s = 0; s < n_; ++s) {
        while (recv(s)) progressed = true;
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    for (int s = 0; s < n_; ++s) {
      ASSERT_EQ(at(s).sends, at(s).plan.sends.size()) << "slot " << s << " stuck on a send";
      ASSERT_EQ(at(s).recvs, at(s).plan.recvs.size()) << "slot " << s << " stuck on a receive";
    }
    for (const auto& [pair, channel] : channels_)
      EXPECT_TRUE(channel.empty()) << pair.first << " -> " << pair.second << " left messages";
  }

  void check_results() {
    for (int s = 0; s < n_; ++s) {
      for (size_t i = sc_.checked(s).first; i < sc_.checked(s).second; ++i) {
        float want = sc_.want(s, i);
        ASSERT_EQ(std::bit_cast<uint32_t>(at(s).output[i]), std::bit_cast<uint32_t>(want))
            << "slot " << s << " element " << i << ": " << at(s).output[i] << " want " << want;
      }
    }
  }

  const CollectivePlan& plan(int s) { return at(s).plan; }

 private:
  Slot& at(int s) { return slots_[static_cast<size_t>(s)]; }
  const float* input(Slot& slot, int s) const {
    return sc_.in_place ? slot.output.data() + sc_.input_at(s) : slot.input.data();
  }

  void copy(Slot& slot, int s) {
    const CollectivePlan& p = slot.plan;
    ASSERT_LE(p.copy_from + p.copy_count, sc_.input_len());
    ASSERT_LE(p.copy_to + p.copy_count, sc_.output_len());
    std::vector<float> tmp(input(slot, s) + p.copy_from,
                           input(slot, s) + p.copy_from + p.copy_count);
    std::copy(tmp.begin(), tmp.end(), slot.output.begin() + static_cast<ptrdiff_t>(p.copy_to));
  }

  bool send(int s) {
    Slot& slot = at(s);
    if (slot.sends >= slot.plan.sends.size()) return false;
    const PlanSend& send = slot.plan.sends[slot.sends];
    if (send.after_recv >= 0 && static_cast<size_t>(send.after_recv) >= slot.recvs) return false;
    EXPECT_TRUE(send.peer >= 0 && send.peer < n_ && send.peer != s) << "slot " << s;
    EXPECT_NE(send.source, PlanBuffer::kStaging);
    EXPECT_LE(send.offset + send.count,
              send.source == PlanBuffer::kInput ? sc_.input_len() : sc_.output_len());
    if (::testing::Test::HasFailure()) return false;
    const float* from = send.source == PlanBuffer::kInput ? input(slot, s) : slot.output.data();
    channels_[{s, send.peer}].emplace_back(from + send.offset, from + send.offset + send.count);
    ++slot.sends;
    return true;
  }

  // Takes the message for the next receive off its channel when one is
  // there, and applies it when the plan allows (after its send).
  bool recv(int s) {
    Slot& slot = at(s);
    if (slot.recvs >= slot.plan.recvs.size()) return false;
    const PlanRecv& r = slot.plan.recvs[slot.recvs];
    auto& channel = channels_[{r.peer, s}];
    if (!slot.staged.count(slot.recvs)) {
      if (channel.empty()) return false;
      EXPECT_EQ(channel.front().size(), r.count) << "slot " << s << " receive " << slot.recvs;
      slot.staged[slot.recvs] = std::move(channel.front());
      channel.pop_front();
    }
    if (r.after_send >= 0 && static_cast<size_t>(r.after_send) >= slot.sends) return false;
    std::vector<float> got = std::move(slot.staged[slot.recvs]);
    slot.staged.erase(slot.recvs);
    EXPECT_LE(r.offset + r.count, sc_.output_len());
    if (::testing::Test::HasFailure()) return false;
    float* out = slot.output.data() + r.offset;
    for (size_t i = 0; i < got.size() && i < r.count; ++i) {
      switch (r.action) {
        case RecvAction::kIntoOutput:
          out[i] = got[i];
          break;
        case RecvAction::kCombineAfterOutput:
          out[i] = out[i] + got[i];
          break;
        case RecvAction::kCombineBeforeOutput:
          out[i] = got[i] + out[i];
          break;
        default:
          ADD_FAILURE() << "recursive doubling and halving use no ring action";
          return false;
      }
    }
    ++slot.recvs;
    return true;
  }

  Scenario sc_;
  int n_;
  std::vector<Slot> slots_;
  std::map<std::pair<int, int>, std::deque<std::vector<float>>> channels_;
};

void check_every_slot_count_and_segment(Kind kind) {
  // A reduce_scatter's count is per slot: its buffer is N times as large.
  const size_t large = kind == Kind::kReduceScatterHalving ? 101 : 1001;
  for (int n = 1; n <= 17; ++n) {
    for (size_t count :
         {size_t{0}, size_t{1}, static_cast<size_t>(n) - 1, static_cast<size_t>(n) + 1, large}) {
      for (size_t segment : {size_t{1}, size_t{3}, size_t{64}, size_t{4096}}) {
        for (bool in_place : {false, true}) {
          Scenario sc{kind, n, count, segment, in_place, 0};
          SCOPED_TRACE(sc.describe());
          Simulator sim(sc);
          sim.run();
          if (::testing::Test::HasFatalFailure()) return;
          sim.check_results();
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(DoublingPlan, EverySlotCountAndSegmentMatchesTheDocumentedOrder) {
  check_every_slot_count_and_segment(Kind::kAllreduce);
}

TEST(HalvingPlan, EverySlotCountAndSegmentMatchesTheDocumentedOrder) {
  check_every_slot_count_and_segment(Kind::kAllreduceHalving);
}

TEST(HalvingPlan, ReduceScatterOfEverySlotCountAndSegmentMatchesTheDocumentedOrder) {
  check_every_slot_count_and_segment(Kind::kReduceScatterHalving);
}

// A reduce_scatter slot of [0, p) sends every block but its own once (the
// block of its extra slot included): N - 1 blocks, as on the ring; an extra
// slot its whole input.
TEST(HalvingPlan, ReduceScatterSendsWhatTheRingSends) {
  const size_t recvcount = 64;
  for (int n : {2, 4, 8, 16, 5, 12}) {
    int p = 1;
    while (p * 2 <= n) p *= 2;
    for (int s = 0; s < n; ++s) {
      CollectivePlan plan;
      plan_reduce_scatter_halving(plan, PlanGeometry{n, s, 4096}, recvcount, false);
      size_t sent = 0;
      for (const PlanSend& send : plan.sends) sent += send.count;
      const size_t blocks = s >= p ? static_cast<size_t>(n) : static_cast<size_t>(n - 1);
      const size_t want = blocks * recvcount;
      EXPECT_EQ(sent, want) << "n=" << n << " slot " << s;
    }
  }
}

// Each slot of [0, p) sends about 2(p - 1)/p of the buffer, as the ring
// does (plus the fold's whole buffer), and the halving's parts shrink by
// half at each bit.
TEST(HalvingPlan, SendsWhatTheRingSendsNotLog2PBuffers) {
  const size_t count = 1024;
  for (int n : {2, 4, 8, 16, 5, 12}) {
    int p = 1;
    while (p * 2 <= n) p *= 2;
    for (int s = 0; s < n; ++s) {
      CollectivePlan plan;
      plan_allreduce_halving(plan, PlanGeometry{n, s, 4096}, count, false);
      size_t sent = 0;
      for (const PlanSend& send : plan.sends) sent += send.count;
      const size_t fold = s < n - p || s >= p ? count : 0;
      const size_t want = s >= p ? count : 2 * count * static_cast<size_t>(p - 1) / p + fold;
      EXPECT_EQ(sent, want) << "n=" << n << " slot " << s;
    }
  }
}

// Every root, and every slot's block, reaches every slot; what a slot
// already has is never received again.
TEST(DoublingPlan, BroadcastAndAllgatherOfEveryRootAndSize) {
  for (int n = 1; n <= 13; ++n) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{37}}) {
      for (size_t segment : {size_t{1}, size_t{4}, size_t{64}}) {
        for (bool in_place : {false, true}) {
          std::vector<Scenario> scenarios = {{Kind::kAllgather, n, count, segment, in_place, 0}};
          for (int root = 0; root < n; ++root)
            scenarios.push_back({Kind::kBroadcast, n, count, segment, in_place, root});
          for (const Scenario& sc : scenarios) {
            SCOPED_TRACE(sc.describe());
            Simulator sim(sc);
            sim.run();
            if (HasFatalFailure()) return;
            sim.check_results();
            if (HasFatalFailure()) return;
            size_t received = 0;
            for (int s = 0; s < n; ++s) {
              for (const PlanRecv& r : sim.plan(s).recvs) received += r.count;
            }
            // Each slot receives exactly what it lacks.
            size_t lacking = sc.kind == Kind::kBroadcast ? count * static_cast<size_t>(n - 1)
                                                         : count * static_cast<size_t>(n) * (n - 1);
            EXPECT_EQ(received, lacking);
          }
        }
      }
    }
  }
}

// Each slot exchanges with ceil(log2 n) or fewer partners, plus its fold
// partner, all among doubling_pairs(); messages hold at most a segment.
TEST(DoublingPlan, PeersAreTheDocumentedPairsAndMessagesASegment) {
  for (int n = 2; n <= 33; ++n) {
    auto pairs = doubling_pairs(n);
    int log2n = 0;
    while ((2 << log2n) <= n) ++log2n;
    for (int s = 0; s < n; ++s) {
      for (int kind = 0; kind < 6; ++kind) {
        CollectivePlan plan;
        PlanGeometry g{n, s, 7};
        if (kind == 0) plan_allreduce_doubling(plan, g, 100, false);
        if (kind == 4) plan_allreduce_halving(plan, g, 100, false);
        if (kind == 5) plan_reduce_scatter_halving(plan, g, 100, false);
        if (kind == 1) plan_allgather_doubling(plan, g, 100, false);
        if (kind == 2 || kind == 3)
          plan_broadcast_doubling(plan, g, 100, kind == 2 ? 0 : n - 1, false);
        std::set<int> peers;
        for (const PlanSend& send : plan.sends) {
          peers.insert(send.peer);
          EXPECT_LE(send.count, 7u);
        }
        for (const PlanRecv& recv : plan.recvs) peers.insert(recv.peer);
        EXPECT_LE(peers.size(), static_cast<size_t>(log2n + 1)) << "n=" << n << " slot=" << s;
        for (int peer : peers) {
          std::pair<int, int> pair{std::min(s, peer), std::max(s, peer)};
          EXPECT_TRUE(std::binary_search(pairs.begin(), pairs.end(), pair))
              << "n=" << n << " slot " << s << " talks to " << peer << " (plan " << kind << ")";
        }
      }
    }
  }
}

TEST(DoublingPlan, AverageDividesOnlyTheFinalCombine) {
  CollectivePlan plan;
  plan_allreduce_doubling(plan, PlanGeometry{6, 1, 10}, 25, true);
  EXPECT_TRUE(plan.divide_final);
  int finals = 0;
  for (const PlanRecv& r : plan.recvs) finals += r.final;
  EXPECT_EQ(finals, 3);  // one per segment: 25 elements in segments of 10
  plan_allreduce_doubling(plan, PlanGeometry{6, 5, 10}, 25, true);  // beyond p = 4
  for (const PlanRecv& r : plan.recvs) EXPECT_EQ(r.action, RecvAction::kIntoOutput);
}

TEST(HalvingPlan, AverageDividesEachElementOnceAfterItsLastCombine) {
  CollectivePlan plan;
  // Slot 1 of 6 (p = 4): 25 elements split at bit 1 into 12 | 13, slot 1
  // keeps 13, then at bit 2 into 6 | 7, it keeps 6: one final receive.
  plan_allreduce_halving(plan, PlanGeometry{6, 1, 10}, 25, true);
  EXPECT_TRUE(plan.divide_final);
  size_t final_elements = 0;
  for (const PlanRecv& r : plan.recvs) final_elements += r.final ? r.count : 0;
  EXPECT_EQ(final_elements, 6u);
  plan_allreduce_halving(plan, PlanGeometry{6, 5, 10}, 25, true);  // beyond p = 4
  for (const PlanRecv& r : plan.recvs) EXPECT_EQ(r.action, RecvAction::kIntoOutput);
}

TEST(Algorithm, ChoiceDependsOnlyOnSizeNAndPolicy) {
  AlgorithmPolicy policy;  // default
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllreduce, 4096, 4), Algorithm::kDoubling);
  // Each collective switches at its own threshold.
  for (size_t k = 0; k < kCollectiveKinds; ++k) {
    const auto kind = static_cast<CollectiveKind>(k);
    const size_t max = AlgorithmPolicy::kDefaultDoublingMaxBytes[k];
    EXPECT_EQ(choose_algorithm(policy, kind, max, 4), Algorithm::kDoubling);
    // Between their two thresholds allreduce and reduce_scatter run
    // recursive halving.
    EXPECT_EQ(
        choose_algorithm(policy, kind, max + 1, 4),
        AlgorithmPolicy::kDefaultHalvingMaxBytes[k] > max ? Algorithm::kHalving : Algorithm::kRing);
  }
  const size_t halving_max = AlgorithmPolicy::kDefaultHalvingMaxBytes[0];
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllreduce, halving_max, 4),
            Algorithm::kHalving);
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllreduce, halving_max + 1, 4),
            Algorithm::kRing);
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllreduce, 4096, 1), Algorithm::kRing);
  policy.doubling_max_bytes.fill(0);
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllreduce, 0, 4), Algorithm::kHalving);
  EXPECT_TRUE(policy.may_use_doubling());  // halving exchanges over the same pairs
  policy.halving_max_bytes.fill(0);
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllreduce, 0, 4), Algorithm::kRing);
  EXPECT_FALSE(policy.may_use_doubling());
  policy.force = AlgorithmPolicy::Force::kDoubling;
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllreduce, size_t{1} << 30, 4),
            Algorithm::kDoubling);
  EXPECT_TRUE(policy.may_use_doubling());
  EXPECT_EQ(choose_algorithm(AlgorithmPolicy::ring_only(), CollectiveKind::kAllreduce, 4, 4),
            Algorithm::kRing);
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kReduceScatter, size_t{1} << 30, 4),
            Algorithm::kDoubling);
  // Forced halving is the allreduce's and the reduce_scatter's; the other
  // collectives choose by size.
  policy = AlgorithmPolicy{};
  policy.force = AlgorithmPolicy::Force::kHalving;
  for (auto kind : {CollectiveKind::kAllreduce, CollectiveKind::kReduceScatter}) {
    EXPECT_EQ(choose_algorithm(policy, kind, 4, 4), Algorithm::kHalving);
    EXPECT_EQ(choose_algorithm(policy, kind, size_t{1} << 30, 4), Algorithm::kHalving);
  }
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllgather, 4, 4), Algorithm::kDoubling);
  EXPECT_EQ(choose_algorithm(policy, CollectiveKind::kAllgather, size_t{1} << 30, 4),
            Algorithm::kRing);
}

TEST(Algorithm, ParsesTheVariablesAndNamesWhatIsWrong) {
  EXPECT_EQ(parse_algorithm_force("").value(), AlgorithmPolicy::Force::kNone);
  EXPECT_EQ(parse_algorithm_force("auto").value(), AlgorithmPolicy::Force::kNone);
  EXPECT_EQ(parse_algorithm_force("ring").value(), AlgorithmPolicy::Force::kRing);
  EXPECT_EQ(parse_algorithm_force("doubling").value(), AlgorithmPolicy::Force::kDoubling);
  EXPECT_EQ(parse_algorithm_force("halving").value(), AlgorithmPolicy::Force::kHalving);
  auto bad = parse_algorithm_force("tree");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'tree'"), std::string::npos);
  const size_t k64 = 65536;
  auto doubling = [](const char* text) {
    return parse_algorithm_thresholds(text).value().doubling_max_bytes;
  };
  EXPECT_EQ(doubling("doubling:64K"), (DoublingThresholds{k64, k64, k64, k64}));
  EXPECT_EQ(doubling("doubling:0"), (DoublingThresholds{0, 0, 0, 0}));
  // Entries apply in order over the defaults.
  DoublingThresholds want = AlgorithmPolicy::kDefaultDoublingMaxBytes;
  want[static_cast<size_t>(CollectiveKind::kBroadcast)] = 4096;
  EXPECT_EQ(doubling("broadcast:doubling:4K"), want);
  EXPECT_EQ(doubling("doubling:0,reduce_scatter:doubling:1M"),
            (DoublingThresholds{0, size_t{1} << 20, 0, 0}));
  EXPECT_EQ(parse_algorithm_thresholds("doubling:0").value().halving_max_bytes,
            AlgorithmPolicy::kDefaultHalvingMaxBytes);
  auto halving = parse_algorithm_thresholds("allreduce:halving:2M,doubling:4K");
  ASSERT_TRUE(halving.ok());
  HalvingThresholds want_halving = AlgorithmPolicy::kDefaultHalvingMaxBytes;
  want_halving[0] = size_t{2} << 20;
  EXPECT_EQ(halving.value().halving_max_bytes, want_halving);
  EXPECT_EQ(halving.value().doubling_max_bytes, (DoublingThresholds{4096, 4096, 4096, 4096}));
  EXPECT_EQ(parse_algorithm_thresholds("halving:0").value().halving_max_bytes,
            (HalvingThresholds{0, 0, 0, 0}));
  EXPECT_EQ(parse_algorithm_thresholds("reduce_scatter:halving:64K").value().halving_max_bytes[1],
            65536u);
  for (const char* text : {"", "doubling", "doubling:", "doubling:x", "ring:4K", "doubling:-1",
                           "gather:doubling:4K", "allreduce:ring:4K", "allreduce", "doubling:4K,",
                           "allreduce:doubling:4K,,broadcast:doubling:0", "broadcast:halving:1M",
                           "allgather:halving:1M", "halving:", "halving"}) {
    EXPECT_FALSE(parse_algorithm_thresholds(text).ok()) << text;
  }
  EXPECT_NE(parse_algorithm_thresholds("gather:doubling:4K").status().message().find("'gather:"),
            std::string::npos);
}

TEST(Algorithm, LinksAreTheRingAndTheDoublingPairsOnlyWhenUsed) {
  EXPECT_EQ(algorithm_pairs(AlgorithmPolicy::ring_only(), 4),
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 3}, {1, 2}, {2, 3}}));
  EXPECT_EQ(algorithm_pairs(AlgorithmPolicy{}, 4),
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}));
  // 6 slots: doubling pairs among 0..3 plus the folds (0,4) and (1,5).
  EXPECT_EQ(doubling_pairs(6),
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 4}, {1, 3}, {1, 5}, {2, 3}}));
  EXPECT_TRUE(algorithm_pairs(AlgorithmPolicy{}, 1).empty());
}

}  // namespace
}  // namespace trainmover
