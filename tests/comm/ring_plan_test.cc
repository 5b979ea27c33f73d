// Tests of the ring schedules (comm/ring_plan.h) with an in-memory simulator:
// the plans of all slots run together, each slot's sends matched in order to
// the next slot's receives, and the results compared bit for bit with a
// serial reference that follows the documented reduction order.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "comm/ring_plan.h"
#include "support/plan_values.h"

namespace trainmover {
namespace {

using testing::kPoison;

enum class Collective { kAllreduce, kReduceScatter, kAllgather, kBroadcast };

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllreduce:
      return "allreduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllgather:
      return "allgather";
    case Collective::kBroadcast:
      return "broadcast";
  }
  return "?";
}

struct Scenario {
  Collective collective = Collective::kAllreduce;
  int nslots = 1;
  size_t count = 0;  // allreduce/broadcast: count; reduce_scatter: recvcount; allgather: sendcount
  size_t segment = 1;
  int root = 0;
  bool in_place = false;

  std::string describe() const {
    return std::string(collective_name(collective)) + " nslots=" + std::to_string(nslots) +
           " count=" + std::to_string(count) + " segment=" + std::to_string(segment) +
           " root=" + std::to_string(root) + (in_place ? " in-place" : " out-of-place");
  }
  size_t input_len() const {
    if (collective == Collective::kReduceScatter) return count * static_cast<size_t>(nslots);
    return count;
  }
  size_t output_len() const {
    if (collective == Collective::kAllgather) return count * static_cast<size_t>(nslots);
    return count;
  }
};

// One slot's memory: input and output are views into `storage`; in place,
// they overlap the way the collective's in-place form prescribes.
struct SlotMemory {
  std::vector<float> storage;
  size_t input_at = 0;
  size_t output_at = 0;
  size_t input_len = 0;
  size_t output_len = 0;
  std::map<int64_t, std::vector<float>> staging;  // by receive index
  float* input() { return storage.data() + input_at; }
  float* output() { return storage.data() + output_at; }
};

float value_of(int slot, size_t i) { return testing::plan_value(slot, i); }

SlotMemory make_memory(const Scenario& s, int slot) {
  SlotMemory m;
  m.input_len = s.input_len();
  m.output_len = s.output_len();
  const size_t own = s.count * static_cast<size_t>(slot);
  if (!s.in_place) {
    m.storage.assign(m.input_len + m.output_len, kPoison);
    m.output_at = m.input_len;
  } else if (s.collective == Collective::kReduceScatter) {
    m.storage.assign(m.input_len, kPoison);
    m.output_at = own;  // output is this slot's block of input
  } else if (s.collective == Collective::kAllgather) {
    m.storage.assign(m.output_len, kPoison);
    m.input_at = own;  // input is this slot's block of output
  } else {
    m.storage.assign(m.input_len, kPoison);  // input and output are one buffer
  }
  bool has_input = s.collective != Collective::kBroadcast || slot == s.root;
  if (has_input) {
    for (size_t i = 0; i < m.input_len; ++i) m.input()[i] = value_of(slot, i);
  }
  return m;
}

CollectivePlan make_plan(const Scenario& s, int slot) {
  CollectivePlan plan;
  PlanGeometry g{s.nslots, slot, s.segment};
  switch (s.collective) {
    case Collective::kAllreduce:
      plan_allreduce(plan, g, s.count, false);
      break;
    case Collective::kReduceScatter:
      plan_reduce_scatter(plan, g, s.count, false);
      break;
    case Collective::kAllgather:
      plan_allgather(plan, g, s.count, s.in_place);
      break;
    case Collective::kBroadcast:
      plan_broadcast(plan, g, s.count, s.root, s.in_place);
      break;
  }
  return plan;
}

// The serial reference: ((x[c+1] + x[c+2]) + ...) + x[c] for chunk c.
float reduced(int nslots, int c, size_t i) {
  float acc = value_of((c + 1) % nslots, i);
  for (int k = 2; k <= nslots; ++k) acc = acc + value_of((c + k) % nslots, i);
  return acc;
}

std::vector<float> expected_output(const Scenario& s, int slot) {
  std::vector<float> out(s.output_len());
  const int n = s.nslots;
  for (size_t i = 0; i < out.size(); ++i) {
    switch (s.collective) {
      case Collective::kAllreduce: {
        int c = 0;
        while (c + 1 < n && chunk_begin(s.count, n, c + 1) <= i) ++c;
        out[i] = reduced(n, c, i);
        break;
      }
      case Collective::kReduceScatter:
        out[i] = reduced(n, slot, s.count * static_cast<size_t>(slot) + i);
        break;
      case Collective::kAllgather:
        out[i] = value_of(static_cast<int>(i / s.count), i % s.count);
        break;
      case Collective::kBroadcast:
        out[i] = value_of(s.root, i);
        break;
    }
  }
  return out;
}

class RingSimulator {
 public:
  explicit RingSimulator(const Scenario& s) : s_(s), n_(s.nslots) {
    for (int slot = 0; slot < n_; ++slot) {
      plans_.push_back(make_plan(s, slot));
      memory_.push_back(make_memory(s, slot));
    }
    next_send_.assign(static_cast<size_t>(n_), 0);
    next_recv_.assign(static_cast<size_t>(n_), 0);
    channels_.resize(static_cast<size_t>(n_));
  }

  // Checks the plans' shapes, then runs them; false (with a failure) on error.
  void run() {
    check_shapes();
    if (::testing::Test::HasFatalFailure()) return;
    for (int slot = 0; slot < n_; ++slot) local_copy(slot);
    while (step()) {
    }
    for (int slot = 0; slot < n_; ++slot) {
      ASSERT_EQ(next_send_[idx(slot)], plans_[idx(slot)].sends.size())
          << "slot " << slot << " deadlocked on a send";
      ASSERT_EQ(next_recv_[idx(slot)], plans_[idx(slot)].recvs.size())
          << "slot " << slot << " deadlocked on a recv";
    }
  }

  void check_results() {
    for (int slot = 0; slot < n_; ++slot) {
      std::vector<float> want = expected_output(s_, slot);
      SlotMemory& m = memory_[idx(slot)];
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(m.output()[i]), std::bit_cast<uint32_t>(want[i]))
            << "slot " << slot << " element " << i << ": got " << m.output()[i] << " want "
            << want[i];
      }
    }
  }

  const CollectivePlan& plan(int slot) const { return plans_[idx(slot)]; }

 private:
  static size_t idx(int slot) { return static_cast<size_t>(slot); }
  int next(int slot) const { return (slot + 1) % n_; }

  void check_shapes() {
    for (int slot = 0; slot < n_; ++slot) {
      const CollectivePlan& p = plans_[idx(slot)];
      const CollectivePlan& q = plans_[idx(next(slot))];
      if (n_ == 1) {
        ASSERT_TRUE(p.sends.empty() && p.recvs.empty());
        continue;
      }
      ASSERT_EQ(p.sends.size(), q.recvs.size()) << "slot " << slot << " -> " << next(slot);
      for (size_t j = 0; j < p.sends.size(); ++j) {
        ASSERT_GT(p.sends[j].count, 0u) << "empty send " << j;
        ASSERT_EQ(p.sends[j].count, q.recvs[j].count) << "slot " << slot << " send " << j;
        int64_t dep = p.sends[j].after_recv;
        ASSERT_GE(dep, -1);
        ASSERT_LT(dep, static_cast<int64_t>(p.recvs.size())) << "slot " << slot << " send " << j;
        if (p.sends[j].source == PlanBuffer::kStaging) {
          ASSERT_GE(dep, 0) << "staging send without its receive";
          ASSERT_EQ(p.recvs[static_cast<size_t>(dep)].action, RecvAction::kReduceToStaging);
          ASSERT_EQ(p.recvs[static_cast<size_t>(dep)].count, p.sends[j].count);
        }
      }
    }
  }

  void local_copy(int slot) {
    const CollectivePlan& p = plans_[idx(slot)];
    SlotMemory& m = memory_[idx(slot)];
    if (p.copy_count == 0) return;
    ASSERT_LE(p.copy_from + p.copy_count, m.input_len);
    ASSERT_LE(p.copy_to + p.copy_count, m.output_len);
    std::vector<float> tmp(m.input() + p.copy_from, m.input() + p.copy_from + p.copy_count);
    std::copy(tmp.begin(), tmp.end(), m.output() + p.copy_to);
  }

  // Does every send that is ready (as early as its dependency allows, which
  // exposes a missing dependency), then one receive. False when stuck/done.
  bool step() {
    bool progressed = false;
    for (int slot = 0; slot < n_; ++slot) {
      while (try_send(slot)) progressed = true;
      if (::testing::Test::HasFatalFailure()) return false;
    }
    for (int slot = 0; slot < n_; ++slot) {
      if (try_recv(slot)) {
        progressed = true;
        break;
      }
      if (::testing::Test::HasFatalFailure()) return false;
    }
    return progressed;
  }

  bool try_send(int slot) {
    const CollectivePlan& p = plans_[idx(slot)];
    size_t& j = next_send_[idx(slot)];
    if (j >= p.sends.size()) return false;
    const PlanSend& send = p.sends[j];
    if (send.after_recv >= 0 && static_cast<size_t>(send.after_recv) >= next_recv_[idx(slot)])
      return false;
    SlotMemory& m = memory_[idx(slot)];
    std::vector<float> message;
    switch (send.source) {
      case PlanBuffer::kInput:
        EXPECT_LE(send.offset + send.count, m.input_len) << "slot " << slot << " send " << j;
        if (send.offset + send.count > m.input_len) return false;
        message.assign(m.input() + send.offset, m.input() + send.offset + send.count);
        break;
      case PlanBuffer::kOutput:
        EXPECT_LE(send.offset + send.count, m.output_len) << "slot " << slot << " send " << j;
        if (send.offset + send.count > m.output_len) return false;
        message.assign(m.output() + send.offset, m.output() + send.offset + send.count);
        break;
      case PlanBuffer::kStaging:
        message = m.staging.at(send.after_recv);
        break;
    }
    channels_[idx(next(slot))].push_back(std::move(message));
    ++j;
    return true;
  }

  bool try_recv(int slot) {
    auto& channel = channels_[idx(slot)];
    if (channel.empty()) return false;
    const CollectivePlan& p = plans_[idx(slot)];
    size_t& k = next_recv_[idx(slot)];
    EXPECT_LT(k, p.recvs.size()) << "slot " << slot << " got an unexpected message";
    if (k >= p.recvs.size()) return false;
    const PlanRecv& recv = p.recvs[k];
    std::vector<float> message = std::move(channel.front());
    channel.pop_front();
    EXPECT_EQ(message.size(), recv.count);
    SlotMemory& m = memory_[idx(slot)];
    if (recv.action == RecvAction::kIntoOutput) {
      EXPECT_LE(recv.offset + recv.count, m.output_len);
      if (recv.offset + recv.count > m.output_len) return false;
      std::copy(message.begin(), message.end(), m.output() + recv.offset);
    } else {
      EXPECT_LE(recv.input_offset + recv.count, m.input_len);
      if (recv.input_offset + recv.count > m.input_len) return false;
      const float* in = m.input() + recv.input_offset;
      for (size_t i = 0; i < message.size(); ++i)
        message[i] = message[i] + in[i];  // staging OP input
      if (recv.action == RecvAction::kReduceToStaging) {
        m.staging[static_cast<int64_t>(k)] = std::move(message);
      } else {
        EXPECT_LE(recv.offset + recv.count, m.output_len);
        if (recv.offset + recv.count > m.output_len) return false;
        std::copy(message.begin(), message.end(), m.output() + recv.offset);
      }
    }
    ++k;
    return true;
  }

  Scenario s_;
  int n_;
  std::vector<CollectivePlan> plans_;
  std::vector<SlotMemory> memory_;
  std::vector<size_t> next_send_;
  std::vector<size_t> next_recv_;
  std::vector<std::deque<std::vector<float>>> channels_;
};

void simulate(const Scenario& s) {
  SCOPED_TRACE(s.describe());
  RingSimulator sim(s);
  sim.run();
  if (::testing::Test::HasFailure()) return;
  sim.check_results();
}

std::vector<size_t> counts_for(int n) {
  size_t un = static_cast<size_t>(n);
  return {0, 1, un - 1, un, un + 1, 1000, 4097};
}

const size_t kSegments[] = {1, 3, 64, size_t{1} << 20};

TEST(CollectivePlan, AllreduceMatchesSerialReference) {
  for (int n = 1; n <= 8; ++n) {
    for (size_t count : counts_for(n)) {
      for (size_t seg : kSegments) {
        for (bool in_place : {false, true}) {
          simulate({Collective::kAllreduce, n, count, seg, 0, in_place});
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST(CollectivePlan, ReduceScatterMatchesSerialReference) {
  for (int n = 1; n <= 8; ++n) {
    for (size_t count : counts_for(n)) {
      for (size_t seg : kSegments) {
        for (bool in_place : {false, true}) {
          simulate({Collective::kReduceScatter, n, count, seg, 0, in_place});
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST(CollectivePlan, AllgatherMatchesSerialReference) {
  for (int n = 1; n <= 8; ++n) {
    for (size_t count : counts_for(n)) {
      for (size_t seg : kSegments) {
        for (bool in_place : {false, true}) {
          simulate({Collective::kAllgather, n, count, seg, 0, in_place});
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST(CollectivePlan, BroadcastFromEveryRootMatches) {
  for (int n = 1; n <= 8; ++n) {
    for (size_t count : counts_for(n)) {
      for (size_t seg : kSegments) {
        for (int root = 0; root < n; ++root) {
          for (bool in_place : {false, true}) {
            simulate({Collective::kBroadcast, n, count, seg, root, in_place});
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

TEST(CollectivePlan, AverageSetsDivideFinalOnlyWithSeveralSlots) {
  CollectivePlan plan;
  plan_allreduce(plan, {4, 1, 8}, 100, true);
  EXPECT_TRUE(plan.divide_final);
  plan_allreduce(plan, {4, 1, 8}, 100, false);
  EXPECT_FALSE(plan.divide_final);
  plan_allreduce(plan, {1, 0, 8}, 100, true);
  EXPECT_FALSE(plan.divide_final);
  EXPECT_EQ(plan.copy_count, 100u);
  plan_reduce_scatter(plan, {3, 2, 8}, 100, true);
  EXPECT_TRUE(plan.divide_final);
}

TEST(CollectivePlan, PlanIsClearedWhenReused) {
  CollectivePlan plan;
  plan_allreduce(plan, {4, 1, 1}, 1000, true);
  ASSERT_FALSE(plan.sends.empty());
  plan_broadcast(plan, {4, 1, 8}, 0, 0, false);
  EXPECT_TRUE(plan.sends.empty());
  EXPECT_TRUE(plan.recvs.empty());
  EXPECT_FALSE(plan.divide_final);
  EXPECT_EQ(plan.copy_count, 0u);
}

TEST(CollectivePlan, ChunksCoverTheBufferAndDifferByAtMostOne) {
  for (int n = 1; n <= 9; ++n) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{4097}}) {
      size_t total = 0;
      for (int c = 0; c < n; ++c) {
        EXPECT_EQ(chunk_begin(count, n, c), total);
        size_t size = chunk_size(count, n, c);
        EXPECT_LE(size, count / static_cast<size_t>(n) + 1);
        EXPECT_GE(size, count / static_cast<size_t>(n));
        total += size;
      }
      EXPECT_EQ(total, count) << "n=" << n;
    }
  }
}

TEST(CollectivePlan, TestValuesMakeTheReductionOrderObservable) {
  // Without this, a plan that reduced in another order could still pass.
  int differs = 0;
  for (size_t i = 0; i < 1000; ++i) {
    float documented = (value_of(1, i) + value_of(2, i)) + value_of(0, i);
    float other = (value_of(0, i) + value_of(1, i)) + value_of(2, i);
    if (std::bit_cast<uint32_t>(documented) != std::bit_cast<uint32_t>(other)) ++differs;
  }
  EXPECT_GT(differs, 100);
}

}  // namespace
}  // namespace trainmover
