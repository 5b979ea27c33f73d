// The two-phase switch across real processes: a loop of allreduces (one per
// algorithm: recursive doubling, recursive halving, the ring) in which
// the process serving one slot is replaced — the first, a middle and the
// last slot of the ring, planned (the leaver takes part up to the switch,
// then leaves) and unexpected (the leaver is killed mid-collective; the
// stayers see an error naming it, switch, and issue the iteration again).
// Every result must equal the serial reference and, bit for bit, what a run
// without a switch computed; stayers must allocate no data buffer.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "support/switching.h"

namespace trainmover {
namespace {

using testing::complain;

constexpr int kSlots = 4;
constexpr int kIterations = 6;
constexpr int kSwitchAt = 3;  // the first iteration of the new epoch
constexpr size_t kSegmentBytes = 64 << 10;
// Each iteration runs one allreduce per algorithm, each of several segments:
// recursive doubling (up to 256 KiB), halving (up to the 512 KiB this test
// sets) and the ring.
constexpr size_t kHalvingMaxBytes = 512 << 10;
constexpr size_t kCounts[] = {24 * 1024, 96 * 1024, 160 * 1024};

struct Scenario {
  int victim;
  bool planned;
};

CommConfig config_for(const testing::TestJob& job, int slot, const std::string& name) {
  CommConfig c = job.config(slot, kSlots, name);
  c.segment_bytes = kSegmentBytes;
  c.algorithms.halving_max_bytes[static_cast<size_t>(CollectiveKind::kAllreduce)] =
      kHalvingMaxBytes;
  return c;
}

std::string result_key(const std::string& run, int iteration, int slot) {
  return str_cat(run, "/result/", iteration, "/", slot);
}

// Runs one iteration and records its hash; with `baseline`, compares to it.
int iterate(testing::TestJob const& job, rendezvous::Store& store, Communicator& comm, int it,
            const std::string& run, bool baseline, Status* failure) {
  std::string hashes;
  for (size_t count : kCounts) {
    auto hash = testing::run_iteration(comm, it, count);
    if (!hash.ok()) {
      *failure = hash.status();
      return hash.status().code() == TM_ERROR_INTERNAL
                 ? complain(comm.slot(), hash.status().message())
                 : 0;
    }
    hashes += str_cat(hash.value(), "/");
  }
  (void)job;
  if (!store.set(result_key(run, it, comm.slot()), hashes).ok()) return 4;
  if (!baseline) return 0;
  auto base = store.get(result_key("base", it, comm.slot()), std::chrono::seconds(20));
  if (!base.ok()) return complain(comm.slot(), base.status().message());
  if (base.value() != hashes) {
    return complain(comm.slot(), str_cat("iteration ", it,
                                         " is not bitwise identical to the run without a switch"));
  }
  return 0;
}

void run_baseline(const testing::TestJob& job) {
  auto exits = job.run(kSlots, [&](int slot) {
    auto store = testing::connect_store(job);
    auto comm = Communicator::create(config_for(job, slot, "base"));
    if (!store || !comm.ok()) return complain(slot, "setup");
    Status failure;
    for (int it = 0; it < kIterations; ++it) {
      if (int rc = iterate(job, *store, *comm.value(), it, "base", false, &failure)) return rc;
      if (!failure.ok()) return complain(slot, failure.message());
    }
    return 0;
  });
  for (const auto& e : exits) ASSERT_TRUE(e.ok()) << e.describe();
}

// The zero-memory check around phase 1 and phase 2 on a stayer.
int check_no_data_buffers(int slot, size_t largest, size_t before, size_t after) {
  std::fprintf(stderr, "slot %d: switch allocated at most %zu bytes at once\n", slot, largest);
  if (after != before) return complain(slot, "data buffer bytes changed in a switch");
  if (largest >= kSegmentBytes / 2) {
    return complain(slot, str_cat("a switch allocated ", largest,
                                  " bytes at once: a data buffer (segment ", kSegmentBytes, ")"));
  }
  return 0;
}

// Agrees on the iteration to issue again: the earliest any stayer failed in
// (a stayer can complete the collective the leaver died in, and fail the next).
Result<int> resume_point(rendezvous::Store& store, int victim) {
  int resume = kIterations;
  for (int s = 0; s < kSlots; ++s) {
    if (s == victim) continue;
    TM_ASSIGN_OR_RETURN(std::string v,
                        store.get(str_cat("failed_at/", s), std::chrono::seconds(20)));
    resume = std::min(resume, std::stoi(v));
  }
  return resume;
}

int stayer(const testing::TestJob& job, const Scenario& sc, int slot, const std::string& run) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create(config_for(job, slot, run));
  if (!store || !created.ok()) return complain(slot, "setup");
  Communicator& comm = *created.value();
  auto switch_now = [&]() -> int {
    auto joiner = testing::fetch_endpoint(*store, "standby");
    auto first = testing::initial_view(*store, run, kSlots);
    if (!joiner.ok() || !first.ok()) return complain(slot, "views");
    View next = testing::replace_slot(first.value(), 1, sc.victim, joiner.value());
    size_t before = comm.data_buffer_bytes();
    // Shared memory: the spare ring made at creation (after the first
    // links) is what a ring neighbour's link to the joiner takes.
    const auto& rings = comm.config().ring_pool;
    if (rings && rings->spare() != 1) return complain(slot, "no spare ring before the switch");
    testing::AllocationWatch watch;
    Status st = comm.prepare_switch(next);
    if (st.ok()) st = comm.wait_prepared();
    if (st.ok()) st = comm.switchover(1);
    if (!st.ok()) return complain(slot, "switch: " + st.message());
    const bool neighbour = (slot + 1) % kSlots == sc.victim || (sc.victim + 1) % kSlots == slot;
    if (rings && neighbour && rings->spare() != 0)
      return complain(slot, "the link to the joiner made a ring instead of taking the spare");
    return check_no_data_buffers(slot, watch.largest(), before, comm.data_buffer_bytes());
  };
  for (int it = 0; it < kIterations; ++it) {
    if (sc.planned && it == kSwitchAt) {
      if (int rc = switch_now()) return rc;
    }
    Status failure;
    const int64_t started = testing::monotonic_ns();
    if (int rc = iterate(job, *store, comm, it, run, true, &failure)) return rc;
    if (failure.ok()) continue;
    if (sc.planned) return complain(slot, failure.message());
    int64_t seen = testing::monotonic_ns();
    if (failure.failed_slot() != sc.victim)
      return complain(slot, "error does not name the dead slot: " + failure.message());
    auto killed = store->get("killed_at", std::chrono::seconds(20));
    if (!killed.ok()) return complain(slot, killed.status().message());
    // Detection counts from the kill or, when this slot completed the
    // collective the leaver died in and failed the next, from the start of
    // that next one: the checks and store calls of the completed iteration
    // in between are the test's own work (under a sanitizer and load, most
    // of a second), not the time it takes to name a dead peer.
    const int64_t killed_ns = std::stoll(killed.value());
    const int64_t since = std::max(started, killed_ns);
    double detect_s = static_cast<double>(seen - since) / 1e9;
    std::fprintf(
        stderr, "slot %d: iteration %d failed %.2f ms after the kill, %.2f ms after it began: %s\n",
        slot, it, static_cast<double>(seen - killed_ns) / 1e6, detect_s * 1e3,
        failure.message().c_str());
    if (detect_s > 1.0) return complain(slot, "detection took over 1 s");
    if (!store->set(str_cat("failed_at/", slot), std::to_string(it)).ok()) return 4;
    if (int rc = switch_now()) return rc;
    auto resume = resume_point(*store, sc.victim);
    if (!resume.ok()) return complain(slot, resume.status().message());
    it = resume.value() - 1;
  }
  Status st = testing::exchange_across(comm);
  return st.ok() ? 0 : complain(slot, "send/recv after the switch: " + st.message());
}

int leaver(const testing::TestJob& job, const Scenario& sc, int slot, const std::string& run) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create(config_for(job, slot, run));
  if (!store || !created.ok()) return complain(slot, "setup");
  Communicator& comm = *created.value();
  for (int it = 0; it < kSwitchAt; ++it) {
    Status failure;
    if (int rc = iterate(job, *store, comm, it, run, true, &failure)) return rc;
    if (!failure.ok()) return complain(slot, failure.message());
  }
  if (!sc.planned) {
    // Dies a moment into the next collective, while data is in flight.
    std::thread killer([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      (void)store->set("killed_at", std::to_string(testing::monotonic_ns()));
      raise(SIGKILL);
    });
    Status failure;
    (void)iterate(job, *store, comm, kSwitchAt, run, true, &failure);
    killer.join();
    return 5;  // not reached
  }
  auto joiner = testing::fetch_endpoint(*store, "standby");
  auto first = testing::initial_view(*store, run, kSlots);
  if (!joiner.ok() || !first.ok()) return complain(slot, "views");
  Status st =
      comm.prepare_switch(testing::replace_slot(first.value(), 1, sc.victim, joiner.value()));
  if (st.ok()) st = comm.switchover(1);
  if (!st.ok()) return complain(slot, "leaving: " + st.message());
  if (comm.barrier().ok()) return complain(slot, "a leaver could still call a collective");
  return 0;
}

int joiner(const testing::TestJob& job, const Scenario& sc, const std::string& run) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create_standby(config_for(job, 0, run));
  if (!store || !created.ok()) return complain(-1, "standby setup");
  Communicator& comm = *created.value();
  if (comm.barrier().ok()) return complain(-1, "a standby could call a collective");
  if (!testing::publish_endpoint(*store, "standby", comm.endpoint()).ok()) return 4;
  auto first = testing::initial_view(*store, run, kSlots);
  if (!first.ok()) return complain(-1, first.status().message());
  Status st = comm.join(testing::replace_slot(first.value(), 1, sc.victim, comm.endpoint()));
  if (st.ok()) st = comm.switchover(1);
  if (!st.ok()) return complain(sc.victim, "joining: " + st.message());
  int start = kSwitchAt;
  if (!sc.planned) {
    auto resume = resume_point(*store, sc.victim);
    if (!resume.ok()) return complain(sc.victim, resume.status().message());
    start = resume.value();
  }
  for (int it = start; it < kIterations; ++it) {
    Status failure;
    if (int rc = iterate(job, *store, comm, it, run, true, &failure)) return rc;
    if (!failure.ok()) return complain(sc.victim, failure.message());
  }
  st = testing::exchange_across(comm);
  return st.ok() ? 0 : complain(sc.victim, "send/recv after the switch: " + st.message());
}

void run_switch(const Scenario& sc) {
  testing::TestJob job;
  run_baseline(job);
  const std::string run = str_cat(sc.planned ? "planned" : "unexpected", sc.victim);
  // Processes 0..kSlots-1 serve the slots; process kSlots is the standby.
  auto exits = job.run(kSlots + 1, [&](int who) {
    if (who == kSlots) return joiner(job, sc, run);
    if (who == sc.victim) return leaver(job, sc, who, run);
    return stayer(job, sc, who, run);
  });
  for (int who = 0; who <= kSlots; ++who) {
    if (who == sc.victim && !sc.planned) {
      EXPECT_EQ(exits[static_cast<size_t>(who)].signal, SIGKILL)
          << exits[static_cast<size_t>(who)].describe();
      continue;
    }
    EXPECT_TRUE(exits[static_cast<size_t>(who)].ok())
        << (who == kSlots ? "standby" : str_cat("slot ", who)) << ": "
        << exits[static_cast<size_t>(who)].describe();
  }
}

TEST(PlannedSwitch, EachIterationRunsEveryAllreduceAlgorithm) {
  testing::TestJob job;
  const AlgorithmPolicy policy = config_for(job, 0, "policy").algorithms;
  std::vector<Algorithm> run;
  for (size_t count : kCounts)
    run.push_back(
        choose_algorithm(policy, CollectiveKind::kAllreduce, count * sizeof(float), kSlots));
  EXPECT_EQ(run,
            (std::vector<Algorithm>{Algorithm::kDoubling, Algorithm::kHalving, Algorithm::kRing}));
}

TEST(PlannedSwitch, ReplacesTheFirstSlot) { run_switch({0, true}); }
TEST(PlannedSwitch, ReplacesAMiddleSlot) { run_switch({1, true}); }
TEST(PlannedSwitch, ReplacesTheLastSlot) { run_switch({kSlots - 1, true}); }
TEST(UnexpectedSwitch, ReplacesTheFirstSlot) { run_switch({0, false}); }
TEST(UnexpectedSwitch, ReplacesAMiddleSlot) { run_switch({1, false}); }
TEST(UnexpectedSwitch, ReplacesTheLastSlot) { run_switch({kSlots - 1, false}); }

}  // namespace
}  // namespace trainmover
